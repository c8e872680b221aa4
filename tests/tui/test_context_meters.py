"""Meters colour by the ``[context]`` thresholds in force: notify, reminder, hand-off, force."""

from __future__ import annotations

from pathlib import Path

import pytest
from panel_context_data import insert_at, style_at
from tui_support import AppFactory, preview, session_list, started, status_panel, wait_until

from tui.widgets.session_row import session_row

AT_55 = "0000a055-0000-4000-8000-000000000055"
AT_65 = "0000a065-0000-4000-8000-000000000065"
AT_75 = "0000a075-0000-4000-8000-000000000075"
AT_92 = "0000a092-0000-4000-8000-000000000092"
AT_30 = "0000a030-0000-4000-8000-000000000030"


@pytest.fixture
async def levels_dir(data_dir: Path) -> Path:
    await insert_at(
        data_dir, {AT_55: 110_000, AT_65: 130_000, AT_75: 150_000, AT_92: 184_000, AT_30: 60_000}
    )
    return data_dir


async def _preview_style(app, pilot, cid: str) -> str:  # type: ignore[no-untyped-def]
    assert session_list(app).highlight(cid)
    await wait_until(
        pilot,
        lambda: preview(app).session is not None and preview(app).session.conversation_id == cid,  # type: ignore[union-attr]
        what=f"preview of {cid}",
    )
    header = preview(app).header.content
    return style_at(header, "used")  # type: ignore[arg-type]


async def test_each_default_level_has_its_colour(levels_dir: Path, make_app: AppFactory) -> None:
    """50% warns (gold), 60% reminds, 70% hands off, 90% forces; under 50% is quiet."""
    app = make_app(levels_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert await _preview_style(app, pilot, AT_30) == ""
        assert await _preview_style(app, pilot, AT_55) == "gold1"
        assert await _preview_style(app, pilot, AT_65) == "bold gold1"
        assert await _preview_style(app, pilot, AT_75) == "dark_orange"
        assert await _preview_style(app, pilot, AT_92) == "bold red"


async def test_configured_thresholds_move_the_colours(
    levels_dir: Path, make_app: AppFactory
) -> None:
    """With the hand-off at 50% and force at 60%, a session at 55% is past the hand-off."""
    (levels_dir / "config.toml").write_text(
        (levels_dir / "config.toml").read_text(encoding="utf-8")
        + "\n[context]\nnotify_user_at = 20\nreminder = 40\nhandoff = 50\nforce = 60\n",
        encoding="utf-8",
    )
    app = make_app(levels_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert await _preview_style(app, pilot, AT_30) == "gold1"
        assert await _preview_style(app, pilot, AT_55) == "dark_orange"
        assert await _preview_style(app, pilot, AT_65) == "bold red"
        rows = {s.conversation_id: s for s in session_list(app).sessions}
        thresholds = app.orchestrator.settings.context
        row = session_row(rows[AT_55], app.clock(), thresholds=thresholds)
        assert "dark_orange" in style_at(row.renderables[1], "used")  # type: ignore[arg-type]
        fullest = status_panel(app).render().renderables[1]
        assert "bold red" in style_at(fullest, "184k used")  # type: ignore[arg-type]


async def test_a_projects_own_thresholds_colour_its_sessions(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """``<repo>/.delegate/config.toml`` moves the levels for the sessions working there only."""
    repo = tmp_path / "payments"
    (repo / ".git").mkdir(parents=True)
    (repo / ".delegate").mkdir()
    (repo / ".delegate" / "config.toml").write_text(
        "[context]\nnotify_user_at = 10\nreminder = 20\nhandoff = 25\nforce = 50\n",
        encoding="utf-8",
    )
    await insert_at(data_dir, {AT_30: 60_000}, cwd=str(repo))
    await insert_at(data_dir, {AT_55: 60_000}, cwd=str(tmp_path))
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert await _preview_style(app, pilot, AT_30) == "dark_orange"
        assert await _preview_style(app, pilot, AT_55) == ""


async def test_a_broken_project_file_leaves_the_meters_on_the_data_folders_levels(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    repo = tmp_path / "broken"
    (repo / ".git").mkdir(parents=True)
    (repo / ".delegate").mkdir()
    (repo / ".delegate" / "config.toml").write_text("[context]\nhandoff = 'soon'\n")
    await insert_at(data_dir, {AT_55: 110_000}, cwd=str(repo))
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert await _preview_style(app, pilot, AT_55) == "gold1"
