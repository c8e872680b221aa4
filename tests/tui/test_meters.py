"""Meters say when usage is unknown, and mark a figure estimated after a compaction with ≈."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcripts import COMPACTED, MEASURED, UNKNOWN, import_into, meter_homes
from tui_support import (
    AppFactory,
    preview,
    screen_text,
    session_list,
    started,
    static_text,
    wait_until,
)

from tui.cli import main


@pytest.fixture
async def meters_dir(data_dir: Path, tmp_path: Path) -> Path:
    claude = tmp_path / "claude"
    meter_homes(claude)
    await import_into(data_dir, claude)
    return data_dir


async def test_list_rows_say_usage_unknown_and_mark_estimates(
    meters_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(meters_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 3, what="3 rows")
        text = screen_text(app)
        assert "usage unknown" in text
        assert "0 used" not in text
        assert "≈" in text
        assert "42k used" in text


async def test_the_preview_header_meter_says_it_too(meters_dir: Path, make_app: AppFactory) -> None:
    app = make_app(meters_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        listed = session_list(app)
        for cid, expected in ((UNKNOWN, "usage unknown"), (COMPACTED, "≈")):
            assert listed.highlight(cid)
            await wait_until(
                pilot,
                lambda cid=cid: (
                    preview(app).session is not None and preview(app).session.conversation_id == cid
                ),  # type: ignore[union-attr]
                what=f"preview of {cid}",
            )
            assert expected in static_text(preview(app).header)


def test_the_cli_list_says_usage_unknown(
    meters_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(meters_dir), "sessions", "list", "--plain"]) == 0
    rows = {line.split("\t")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "usage unknown" in rows[UNKNOWN]
    assert "≈" in rows[COMPACTED]
    assert "≈" not in rows[MEASURED]
    assert "42k used" in rows[MEASURED]
