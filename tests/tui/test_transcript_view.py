"""ctrl+t: the full-screen transcript view, paged from the end of the file, with search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from transcripts import PROJECT, assistant, import_into, text, user
from tui_support import AppFactory, notifications, started, static_text, type_text, wait_until

from tui.screens.session_picker import SessionPickerScreen
from tui.screens.transcript import TranscriptScreen

SESSION = "cccccccc-0000-4000-8000-000000000001"
FILLER = "filler words " * 150  # about 2 KB a message
MESSAGES = 8_000


def _transcript(claude_dir: Path, messages: int = MESSAGES) -> Path:
    """Prompts and replies, about 16 MB; "needle" only in message 40 (#41)."""
    path = claude_dir / "projects" / PROJECT / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for i in range(messages):
            body = f"message {i} " + ("the needle is here " if i == 40 else "") + FILLER
            line = (
                user(SESSION, i, body)
                if i % 2 == 0
                else assistant(SESSION, i, [text(body)], used=50_000 + i)
            )
            f.write(json.dumps(line) + "\n")
    return path


@pytest.fixture
async def big_dir(data_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    path = _transcript(tmp_path / "claude")
    await import_into(data_dir, tmp_path / "claude")
    return data_dir, path


@pytest.fixture
async def small_dir(data_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    path = _transcript(tmp_path / "claude", messages=400)
    await import_into(data_dir, tmp_path / "claude")
    return data_dir, path


def _bytes_read() -> int:
    """What this process has read through system calls so far (Linux)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _view(pilot: Pilot[None]) -> TranscriptScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TranscriptScreen)
    return screen


async def _open(pilot: Pilot[None]) -> TranscriptScreen:
    await started(pilot)
    await pilot.press("ctrl+t")
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, TranscriptScreen) and pilot.app.screen.loaded,
        seconds=20,
        what="the transcript view",
    )
    return _view(pilot)


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc/self/io")
async def test_a_large_transcript_opens_at_its_end_without_reading_it_whole(
    big_dir: tuple[Path, Path], make_app: AppFactory
) -> None:
    data_dir, path = big_dir
    size = path.stat().st_size
    assert size > 15_000_000
    app = make_app(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        await started(pilot)
        before = _bytes_read()
        view = await _open(pilot)
        shown = view.messages_text()
        assert f"message {MESSAGES - 1} " in shown
        assert f"#{MESSAGES} " in shown  # numbered in order, the newest last
        await pilot.press("alt+up")  # an older page
        await wait_until(
            pilot, lambda: f"message {MESSAGES - 60} " in view.messages_text(), what="older page"
        )
        read = _bytes_read() - before
        assert read < size // 20, f"read {read:,} bytes of a {size:,}-byte transcript"


async def test_the_details_header_says_where_and_what(
    small_dir: tuple[Path, Path], make_app: AppFactory
) -> None:
    data_dir, path = small_dir
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        view = await _open(pilot)
        header = static_text(view.details, width=400)
        assert SESSION in header  # the full id
        assert str(path) in header
        assert "KiB" in header  # its size
        assert "claude-sonnet-4-5" in header  # the model
        assert "/work/app" in header
        assert "main" in header  # the branch
        assert "200k" in header  # the context window
        assert "2026-11-21" in header  # created and updated, absolute
        assert "ago" in header  # and relative


async def test_search_finds_an_old_message_and_esc_goes_back(
    small_dir: tuple[Path, Path], make_app: AppFactory
) -> None:
    data_dir, _path = small_dir
    app = make_app(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        view = await _open(pilot)
        await type_text(pilot, "NEEDLE")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "the needle is here" in view.messages_text(), seconds=20, what="match"
        )
        assert view.match_text() is not None
        assert "the needle is here" in (view.match_text() or "")

        await pilot.press("enter")  # no older match
        await wait_until(
            pilot, lambda: any("No older match" in n for n in notifications(app)), what="notice"
        )

        await pilot.press("escape")  # clears the search
        await pilot.press("escape")  # closes the view
        await wait_until(
            pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker"
        )
