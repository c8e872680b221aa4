"""SVG snapshots of every screen and state a user can reach (in ``snapshots/test_snapshots/``).

Each test builds its state in ``run_before`` and waits for the workers, so the
picture never depends on timing. Update with ``--snapshot-update``, then look at
every changed file (``rsvg-convert -w 1400 file.svg -o file.png``) before accepting it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_textual_snapshot
from another_process import ARRIVED_ID
from syrupy import SnapshotAssertion
from textual.command import CommandList
from textual.pilot import Pilot
from textual.widgets import Input, Select
from tui_support import (
    AppFactory,
    history_cells,
    hostile_sessions,
    insert_run,
    insert_running_run,
    insert_sessions,
    list_only,
    realdata_homes,
    session_list,
    session_with,
    settle,
    status_panel,
    type_text,
    wait_until,
    write_from_another_process,
)

from core.models import RunStatus, SessionState
from tui.live import Supervision
from tui.widgets.history import FollowUpCompletedCell, RunFailedCell

SnapCompare = Callable[..., bool]
WIDE = (160, 48)
MEDIUM = (120, 36)
NARROW = (80, 24)


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await settle(pilot)


async def _follow_up(pilot: Pilot[None], prompt: str) -> None:
    """Send ``prompt`` into the highlighted session and wait for the reply."""
    await pilot.press("ctrl+f")
    await settle(pilot)
    await type_text(pilot, prompt)
    await pilot.press("ctrl+s")
    await wait_until(
        pilot,
        lambda: any(isinstance(c, FollowUpCompletedCell) for c in history_cells(pilot.app)),
        what="the completed cell",
    )
    await wait_until(pilot, lambda: not pilot.app.orchestrator.running(), what="the run")  # type: ignore[attr-defined]
    await settle(pilot)


# --- the picker with data ------------------------------------------------------


def test_picker_wide(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """160x48: list, preview over history, status with the fullest meters, footer."""
    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=_ready)


def test_picker_medium(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """120x36: still side by side."""
    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=_ready)


def test_picker_narrow(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """80x24: the list over the preview, history hidden."""
    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=_ready)


def test_picker_cursor_moved(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """Third row highlighted; the preview shows that session."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("down", "down")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_filtered(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """'migration' typed: ranked results with snippets, 'N sessions match', the field focused."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press(*"migration")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_filtered_nothing(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """A search without matches: empty list, '0 sessions match', the preview says why."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press()
        pilot.app.screen.query_one("#filter", Input).value = "no-such-thing"
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_preview_paged_older(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """'[' once: page 2 of the first session's messages, '[ older ] newer' in the footer."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("alt+up")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=run_before)


# --- resume --------------------------------------------------------------------


def test_follow_up_box(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """'r': the follow-up box naming the session, a two-line draft, the send hint."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Good. Now apply the smallest fix\nand show the diff.")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_follow_up_box_refuses_empty(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+s on an empty box: it stays open with the reason in red."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def _with_stalled_session(demo_dir: Path) -> Path:
    stalled = session_with(
        "5ta11ed0-0000-4000-8000-000000000000",
        ["Sweep the flaky tests", "[stalled] turn 1: Sweep the flaky tests"],
        title="Sweep the flaky tests",
        agent_id="stalled",
        minutes_ago=1,
        cwd="/home/dev/src/web-console",
    )
    asyncio.run(insert_sessions(demo_dir, [stalled]))
    return demo_dir


async def _start_stalled_follow_up(pilot: Pilot[None]) -> None:
    await _ready(pilot)
    await pilot.press("ctrl+f")
    await settle(pilot)
    await type_text(pilot, "Run the suite again with -x")
    await pilot.press("ctrl+s")
    await wait_until(
        pilot,
        lambda: session_list(pilot.app).sessions[0].state is SessionState.RUNNING,
        what="the running row",
    )
    await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 1, what="the started cell")
    await settle(pilot)


def test_running_follow_up(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """Mid-run: 'running' badge, '1 running now', the started cell, the prompt in the preview."""
    app = make_app(_with_stalled_session(demo_dir))
    assert snap_compare(app, terminal_size=WIDE, run_before=_start_stalled_follow_up)


def test_follow_up_box_busy(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """'r' on the running session: the box opens saying agent_busy above a prompt that waits."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _start_stalled_follow_up(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Then update the changelog")
        await settle(pilot)

    app = make_app(_with_stalled_session(demo_dir))
    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_completed_cells(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """After a follow-up: the reply at the end of the preview, started + completed cells."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await _follow_up(pilot, "Summarise the risky paths in three bullets")

    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=run_before)


def test_narrow_history_toggled(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """80x24 after a follow-up, 'h': the history cells take the preview's place."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await _follow_up(pilot, "Check the retry budget")
        await pilot.press("ctrl+l")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=run_before)


def test_wide_history_hidden(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """160x48, 'h': the history pane hidden, the preview takes the whole right side."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+l")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=run_before)


# --- empty state, help, new delegate, failures -----------------------------------


def test_empty_state(snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory) -> None:
    """A fresh store: the explanation of how to start, no list."""
    assert snap_compare(make_app(data_dir), terminal_size=MEDIUM, run_before=_ready)


def test_empty_state_narrow(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """A fresh store at 80x24."""
    assert snap_compare(make_app(data_dir), terminal_size=NARROW, run_before=_ready)


def test_help(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """'?': every key with what it does."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_new_delegate_form(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """'n': agent select (echo), working directory /tmp, a typed prompt."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Audit the cache headers and list the gaps")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_launched(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """After a launch: the new row on top, launched + finished cells, the reply."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Audit the cache headers and list the gaps")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 2, what="two cells")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=run_before)


def test_failed_run(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """A launch with the failing agent: the failed cell, the error in the preview and row."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        pilot.app.screen.query_one("#launch-agent", Select).value = "failing"
        await type_text(pilot, "Run the integration suite and explode")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: any(isinstance(c, RunFailedCell) for c in history_cells(pilot.app)),
            what="the failed cell",
        )
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=run_before)


def test_interrupted_run(snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory) -> None:
    """A run whose process died: the row and the preview say "last run interrupted"."""
    sessions = [
        session_with(
            "interrupted-1",
            ["Migrate the billing tables", "Started on the first table, then"],
            title="Migrate the billing tables",
            minutes_ago=4,
            last_run_status=RunStatus.INTERRUPTED,
        ),
        session_with("plain-2", ["a plain prompt", "a plain reply"], title="plain", minutes_ago=9),
    ]
    asyncio.run(insert_sessions(data_dir, sessions))
    asyncio.run(
        insert_run(
            data_dir,
            "interrupted-1",
            "Now the invoices table",
            status=RunStatus.INTERRUPTED,
            seconds_ago=200,
            took_s=83,
            output="Copied 1,200 of 4,800 invoice rows",
            error="the process running it (pid 4242) ended before it finished",
        )
    )
    assert snap_compare(make_app(data_dir), terminal_size=MEDIUM, run_before=_ready)


def test_cancelled_run(snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory) -> None:
    """Stopped with x mid-reply: labelled cancelled (not failed), the reply so far kept."""
    held = session_with(
        "gated-1",
        ["Explain the build", "It runs make"],
        title="Explain the build",
        agent_id="gated",
    )
    asyncio.run(insert_sessions(data_dir, [held]))

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Write the release notes")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: "streaming" in str(pilot.app.screen.query_one("#preview-live").render()),
            what="the first word",
        )
        await pilot.press("ctrl+x")
        await settle(pilot)
        await pilot.press("ctrl+x")
        await wait_until(
            pilot,
            lambda: session_list(pilot.app).sessions[0].last_run_status is RunStatus.CANCELLED,
            what="the cancelled row",
        )
        await wait_until(pilot, lambda: not pilot.app.orchestrator.running(), what="the run")  # type: ignore[attr-defined]
        await settle(pilot)
        pilot.app.clear_notifications()
        await settle(pilot)

    assert snap_compare(make_app(data_dir), terminal_size=MEDIUM, run_before=run_before)


def test_hostile_content(snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory) -> None:
    """Markup shown literally, escapes as \\x1b, the long message cut, CJK aligned."""
    asyncio.run(insert_sessions(data_dir, hostile_sessions()))

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        pilot.app.screen.query_one("#preview").scroll_home(animate=False)
        await settle(pilot)

    app = make_app(data_dir, preview_size=10)
    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_hostile_content_narrow(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """80x24: escaped controls and wide characters cut cleanly at the pane's edge."""
    asyncio.run(insert_sessions(data_dir, hostile_sessions()))
    app = make_app(data_dir, preview_size=10)
    assert snap_compare(app, terminal_size=NARROW, run_before=_ready)


def test_sessions_listed_while_their_files_are_read(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    """A cold import's first moments: sessions listed from heads and tails, 'counting…'."""
    asyncio.run(list_only(data_dir, *realdata_homes(tmp_path)))
    assert snap_compare(make_app(data_dir), terminal_size=MEDIUM, run_before=_ready)


def test_command_palette(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """ctrl+p then 'session': the picker's session commands found by name."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await type_text(pilot, "session")
        await wait_until(
            pilot,
            lambda: (
                "Archive session"
                in " ".join(str(o.prompt) for o in pilot.app.screen.query_one(CommandList).options)
            ),
            what="the palette's hits",
        )
        await pilot.pause(0.3)  # the palette settles its list after a short debounce
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


# --- the files themselves --------------------------------------------------------


def test_snapshots_live_in_the_top_level_folder(
    snapshot: SnapshotAssertion, request: pytest.FixtureRequest
) -> None:
    """The conftest override is in force: SVGs land in <repo>/snapshots/test_snapshots/."""
    folder = Path(__file__).resolve().parents[2] / "snapshots" / Path(__file__).stem
    svg = snapshot.use_extension(pytest_textual_snapshot.SVGImageExtension)
    where = Path(svg.extension.get_location(test_location=svg.test_location, index=0))
    assert where == folder / "test_snapshots_live_in_the_top_level_folder.svg"
    assert not (Path(__file__).parent / "__snapshots__").exists()
    if request.config.option.update_snapshots:
        return  # syrupy writes the files when the session ends
    snapshot_tests = {
        name
        for name, function in globals().items()
        if name.startswith("test_") and "snap_compare" in inspect.signature(function).parameters
    }
    assert len(snapshot_tests) >= 20
    assert {p.stem for p in folder.glob("*.svg")} == snapshot_tests


# --- live: what other processes do, while the panel is open --------------------

LIVE = Supervision(store_poll_s=0.05, tick_s=0.2)


def test_session_from_another_process(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """A second process writes a session to the store: it appears on top, no key pressed."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await write_from_another_process(demo_dir)
        await wait_until(
            pilot,
            lambda: session_list(pilot.app).sessions[0].conversation_id == ARRIVED_ID,
            what="the row from the other process",
        )
        await pilot.press("up")  # onto it: its preview
        await settle(pilot)

    app = make_app(demo_dir, supervise=LIVE)
    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_watcher_fallback_notice(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    """Transcripts that cannot be watched are re-scanned: the status line says so, and why."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    (claude / "projects").mkdir(parents=True)
    (codex / "sessions").mkdir(parents=True)
    asyncio.run(
        insert_sessions(data_dir, [session_with("plain-1", ["a prompt", "a reply"], title="plain")])
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await wait_until(
            pilot,
            lambda: "watching: polling" in status_panel(pilot.app).snapshot.note,
            what="the notice",
        )
        await settle(pilot)

    polling = Supervision(store_poll_s=0.05, tick_s=0.2, rescan_s=30, force_polling=True)
    app = make_app(data_dir, supervise=polling, import_sources=(claude, codex))
    assert snap_compare(app, terminal_size=MEDIUM, run_before=run_before)


STDERR_TAIL = """\
codex: connecting to the model
error: stream disconnected before completion: connection refused
retrying in 8s (attempt 3 of 5)
"""


def test_run_waiting_with_stderr(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """A run silent for 38 s of its 47: elapsed time, and what its agent said on stderr."""
    waiting = session_with(
        "wa171ng0-0000-4000-8000-000000000000",
        ["Port the parser to the new grammar", "Ported; 3 tests left to fix."],
        title="Port the parser to the new grammar",
        agent_id="stalled",
        minutes_ago=1,
    )
    asyncio.run(insert_sessions(data_dir, [waiting]))
    asyncio.run(
        insert_running_run(
            data_dir,
            waiting.session.conversation_id,
            "Fix the three failing tests",
            seconds_ago=47,
            stderr_tail=STDERR_TAIL,
            quiet_for_s=38,
        )
    )
    assert snap_compare(make_app(data_dir), terminal_size=MEDIUM, run_before=_ready)


# --- 80x24: every form scrolls to its fields and keeps its send key -------------------


def test_new_delegate_form_80x24(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+n at 80x24: the prompt in view, the send key docked under the fields."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Audit the cache headers and list the gaps")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=run_before)


def test_new_delegate_form_80x24_scrolled_to_the_capsule(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """tab down to the context capsule: the form scrolled, the send key still there."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Audit the cache headers and list the gaps")
        await pilot.press("tab")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=run_before)


def test_follow_up_box_80x24(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Good. Now apply the smallest fix\nand show the diff.")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=run_before)
