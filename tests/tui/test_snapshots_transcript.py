"""Snapshots of the transcript view, the preview's messages and the meters' states
(in ``snapshots/test_snapshots_transcript/``)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from transcripts import COMPACTED, assistant, import_into, meter_homes, text, user, write
from tui_support import AppFactory, session_list, settle, started, wait_until

from tui.screens.transcript import TranscriptScreen

SnapCompare = Callable[..., bool]
MEDIUM = (120, 36)
SESSION = "dddddddd-0000-4000-8000-000000000001"
# The details header shows the transcript's path: one that is the same on every machine.
FIXED_HOME = Path("/tmp/delegate-snapshot-transcripts")


def _conversation() -> list[dict[str, object]]:
    long_reply = "Here is the plan:\n" + "\n".join(f"{i}. step {i}" for i in range(1, 31))
    return [
        user(
            SESSION,
            1,
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
            "<command-args>sonnet</command-args>",
        ),
        user(SESSION, 2, "Tidy the parser module\nand keep its tests green"),
        assistant(
            SESSION,
            3,
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
            used=30_000,
        ),
        user(
            SESSION,
            4,
            [{"type": "tool_result", "tool_use_id": "t1", "content": "12 passed in 0.4s"}],
        ),
        assistant(SESSION, 5, [text(long_reply)], used=42_000),
        user(SESSION, 6, "Thanks, go ahead"),
    ]


@pytest.fixture
def fixed_home() -> Iterator[Path]:
    shutil.rmtree(FIXED_HOME, ignore_errors=True)
    yield FIXED_HOME / "claude"
    shutil.rmtree(FIXED_HOME, ignore_errors=True)


@pytest.fixture
def conversation_dir(data_dir: Path, fixed_home: Path) -> Path:
    write(fixed_home, SESSION, _conversation())
    asyncio.run(import_into(data_dir, fixed_home))
    return data_dir


@pytest.fixture
def meters_dir(data_dir: Path, fixed_home: Path) -> Path:
    meter_homes(fixed_home)
    asyncio.run(import_into(data_dir, fixed_home))
    return data_dir


async def _ready(pilot: Pilot[None]) -> None:
    await started(pilot)
    await wait_until(pilot, lambda: bool(session_list(pilot.app).sessions), what="rows")
    await settle(pilot)


def test_meters_unknown_and_estimated(
    snap_compare: SnapCompare, meters_dir: Path, make_app: AppFactory
) -> None:
    """Three rows: 'usage unknown', an estimate after a compaction (≈), a measured figure;
    the compacted one highlighted, its header meter marked ≈ too."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        session_list(pilot.app).highlight(COMPACTED)
        await settle(pilot)

    assert snap_compare(make_app(meters_dir), terminal_size=MEDIUM, run_before=run_before)


def test_preview_conversation(
    snap_compare: SnapCompare, conversation_dir: Path, make_app: AppFactory
) -> None:
    """Messages #1..#6 in order, '/model sonnet' as typed, a two-line prompt on two lines,
    the tool call and its result one quiet line each, the long reply cut."""
    app = make_app(conversation_dir, preview_size=10)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_ready)


def test_preview_expanded(
    snap_compare: SnapCompare, conversation_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+o: the long reply whole."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)

    app = make_app(conversation_dir, preview_size=10)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=run_before)


def test_transcript_view(
    snap_compare: SnapCompare, conversation_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+t: the details header, the conversation from its end, the find field."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+t")
        await wait_until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, TranscriptScreen)
                and pilot.app.screen.loaded
                and pilot.app.screen.details_loaded
            ),
            what="the transcript view and its details",
        )
        # It opens at its newest message once its messages are laid out, which on a
        # loaded machine comes after the details have loaded.
        screen = pilot.app.screen
        assert isinstance(screen, TranscriptScreen)
        await wait_until(
            pilot, lambda: screen.body.is_vertical_scroll_end, what="the newest message"
        )
        await settle(pilot)

    assert snap_compare(make_app(conversation_dir), terminal_size=MEDIUM, run_before=run_before)


def test_transcript_view_found(
    snap_compare: SnapCompare, conversation_dir: Path, make_app: AppFactory
) -> None:
    """A find: the page ends at the match, highlighted; messages unnumbered."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+t")
        await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, TranscriptScreen) and pilot.app.screen.loaded,
            what="the transcript view",
        )
        await pilot.press(*"parser", "enter")
        screen = pilot.app.screen
        assert isinstance(screen, TranscriptScreen)
        await wait_until(pilot, lambda: screen.match_text() is not None, what="the match")
        await settle(pilot)

    assert snap_compare(make_app(conversation_dir), terminal_size=MEDIUM, run_before=run_before)
