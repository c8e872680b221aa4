"""Helpers shared by the TUI tests: fixed time, test agents, data, screen reading."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console, RenderableType
from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea
from textual.worker import WorkerState

from core.clock import to_us
from core.config import DB_FILENAME
from core.models import Role, RunKind, RunStatus, SessionMode, SessionState, Usage
from core.store import FinishedSession, NewMessage, NewRun, NewSession, Store
from tui.app import DelegateApp
from tui.screens.session_picker import SessionPickerScreen
from tui.widgets.history import HistoryCell, HistoryTimeline
from tui.widgets.preview import PreviewPane
from tui.widgets.session_list import SessionList
from tui.widgets.status_panel import StatusPanel

FIXED_NOW = datetime(2026, 11, 21, 21, 0, tzinfo=UTC)
FIXED_NOW_US = to_us(FIXED_NOW)
# A folder that exists on every machine; nothing machine-specific reaches a snapshot.
LAUNCH_CWD = Path("/tmp")
DEMO_SESSIONS = 200

FAIL_ERROR = "tests exploded: 3 failed, 12 passed"
FAILING_SCRIPT = f"""
[[rules]]
match = "(?i)explode"
fail = "{FAIL_ERROR}"
"""


GATE_FILE = "gate-open"


def gate_script(gate: Path, *, after: int) -> str:
    """A scripted agent's rules: every reply stops after ``after`` words until ``gate`` exists."""
    return f"""
[[rules]]
match = "."
gate = "{gate}"
gate_after = {after}
"""


def open_gate(data_dir: Path) -> None:
    """Let the ``gated`` agents of ``data_dir`` finish their replies."""
    (data_dir / GATE_FILE).touch()


# ``make_app(data_dir, **kwargs)``, the fixture building the app under test.
AppFactory = Callable[..., DelegateApp]


def fixed_clock() -> datetime:
    """The clock every TUI test runs on."""
    return FIXED_NOW


# --- data folders ------------------------------------------------------------


def write_config(data_dir: Path, extra: str = "") -> Path:
    """The test agents, after ``extra`` (top-level keys or tables such as ``[keymap]``).

    ``gated`` streams its first word, then waits until :func:`open_gate` is called
    (a run held in flight for exactly as long as a test needs, no timing involved);
    ``stalled`` streams nothing until stopped (a run certainly still going when a
    snapshot is taken); ``failing`` fails any prompt that says "explode" and echoes
    the rest.
    """
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    script = data_dir / "failing.toml"
    script.write_text(FAILING_SCRIPT, encoding="utf-8")
    gated, stalled = data_dir / "gated.toml", data_dir / "stalled.toml"
    gated.write_text(gate_script(data_dir / GATE_FILE, after=1), encoding="utf-8")
    stalled.write_text(gate_script(data_dir / "never-opened", after=0), encoding="utf-8")
    # The scripted echo launches unless a test says otherwise: with Claude Code or
    # Codex on PATH (CI) the form would default to them.
    default = "" if "default_agent" in extra else 'default_agent = "echo"'
    (data_dir / "config.toml").write_text(
        f"""{default}
{extra}

[agents.gated]
runner = "scripted"
script = "{gated}"
persona = "gated"

[agents.stalled]
runner = "scripted"
script = "{stalled}"
persona = "stalled"

[agents.failing]
runner = "scripted"
script = "{script}"
persona = "failing"
""",
        encoding="utf-8",
    )
    return data_dir


async def insert_sessions(data_dir: Path, sessions: Sequence[FinishedSession]) -> None:
    """Put whole sessions in the store before the app opens it."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.bulk.insert(sessions)
    finally:
        await store.close()


def session_with(
    conversation_id: str,
    contents: Sequence[str],
    *,
    title: str,
    agent_id: str = "echo",
    minutes_ago: int = 5,
    cwd: str = "/home/dev/src/hostile",
    last_run_status: RunStatus = RunStatus.COMPLETED,
) -> FinishedSession:
    """A finished session whose messages alternate user / assistant with ``contents``."""
    last_us = FIXED_NOW_US - minutes_ago * 60_000_000
    created_us = last_us - len(contents) * 1_000_000
    return FinishedSession(
        session=NewSession(
            conversation_id=conversation_id,
            agent_id=agent_id,
            mode=SessionMode.STANDARD,
            cwd=cwd,
            title=title,
            created_us=created_us,
            context_limit=200_000,
            git_branch="main",
        ),
        messages=[
            NewMessage(
                id=f"{conversation_id}/m{i}",
                role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
                content=content,
                created_us=created_us + i * 1_000_000,
                token_count=max(1, len(content) // 4),
            )
            for i, content in enumerate(contents)
        ],
        last_interacted_us=last_us,
        state=SessionState.IDLE,
        last_run_status=last_run_status,
    )


# --- hostile content ---------------------------------------------------------

MARKUP = "[bold red]x[/] and [link=https://evil.example]click[/link]"
ANSI = "\x1b[31mred text\x1b[0m then \x1b]0;pwned\x07 title"
CONTROLS = "bell\x07 backspace\x08 cr\rnul\x00 del\x7f csi\x9b end"
LONG = "\n".join(f"line {i}" for i in range(1, 201))
WIDE = "漢字テスト 한국어 e\u0301 a\u0308 ok"
HOSTILE_TITLE = "[/] cleanup [bold]now\x1b[2J 漢字"
# C0 and C1 controls, DEL: none of these may reach the terminal.
RAW_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def hostile_sessions() -> list[FinishedSession]:
    """A session whose messages hold markup, escapes, controls, 200 lines, CJK; and a plain one."""
    return [
        session_with(
            "hostile-1",
            [HOSTILE_TITLE, LONG, MARKUP, ANSI, CONTROLS, WIDE],
            title=HOSTILE_TITLE,
            minutes_ago=2,
        ),
        session_with("plain-2", ["a plain prompt", "a plain reply"], title="plain", minutes_ago=8),
    ]


# --- driving the app ---------------------------------------------------------


async def settle(pilot: Pilot[None], rounds: int = 6) -> None:
    """Let workers (and the workers they start) finish, and the screen catch up."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        busy = [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not busy:
            await pilot.pause()
            return
        await asyncio.gather(*(w.wait() for w in busy), return_exceptions=True)
    await pilot.pause()


async def wait_until(
    pilot: Pilot[None], condition: Callable[[], bool], seconds: float = 5.0, what: str = ""
) -> None:
    """Pump the app until ``condition()`` holds; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)
    await settle(pilot)


async def started(pilot: Pilot[None]) -> SessionPickerScreen:
    """Wait for the picker to be up with its first page, preview, status and history."""
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, SessionPickerScreen),
        what="the session picker",
    )
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionPickerScreen)
    return screen


def picker(app: App[None]) -> SessionPickerScreen:
    """The picker, even when a modal is on top of it."""
    for screen in app.screen_stack:
        if isinstance(screen, SessionPickerScreen):
            return screen
    raise AssertionError("no session picker on the screen stack")


def session_list(app: App[None]) -> SessionList:
    return picker(app).query_one(SessionList)


def preview(app: App[None]) -> PreviewPane:
    return picker(app).query_one(PreviewPane)


def history_cells(app: App[None]) -> list[HistoryCell]:
    return list(picker(app).query_one(HistoryTimeline).query(HistoryCell))


def status_panel(app: App[None]) -> StatusPanel:
    return picker(app).query_one(StatusPanel)


def screen_lines(app: App[None]) -> list[str]:
    """What the terminal shows now, one string per row (the top screen, as composed)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App[None]) -> str:
    return "\n".join(screen_lines(app))


def raw_segments_text(app: App[None]) -> str:
    """Every character written to the terminal, segment by segment (controls included)."""
    return "".join(
        segment.text for strip in app.screen._compositor.render_strips() for segment in strip
    )


def rendered_text(renderable: RenderableType, width: int = 200) -> str:
    """A Rich renderable as plain text, ``width`` columns wide."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def static_text(widget: Static, width: int = 200) -> str:
    """The plain text of what a ``Static`` holds (or renders), ``width`` columns wide."""
    content = widget.content
    if not content:
        return rendered_text(widget.render(), width)  # type: ignore[arg-type]
    return rendered_text(Text(content) if isinstance(content, str) else content, width)  # type: ignore[arg-type]


def widget_text(root: Widget, selector: str, width: int = 200) -> str:
    return static_text(root.query_one(selector, Static), width)


def notifications(app: App[None]) -> list[str]:
    """Titles and messages of the notifications raised so far (still on show)."""
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type into the focused TextArea or Input in one go (a paste; key by key is slow)."""
    focused = pilot.app.focused
    if isinstance(focused, TextArea):
        focused.insert(text)
    elif isinstance(focused, Input):
        focused.insert_text_at_cursor(text)
    else:
        raise AssertionError(f"cannot type into {focused!r}")
    await pilot.pause()


async def insert_run(
    data_dir: Path,
    conversation_id: str,
    prompt: str,
    *,
    status: RunStatus,
    seconds_ago: int,
    took_s: int,
    output: str = "",
    error: str | None = None,
    run_id: str = "run00000-0000-4000-8000-000000000001",
) -> None:
    """A follow-up run of ``conversation_id`` that ended ``status`` (through the store's API)."""
    started_us = FIXED_NOW_US - seconds_ago * 1_000_000
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        session = await store.sessions.get(conversation_id)
        await store.runs.claim_follow_up(
            conversation_id,
            NewRun(run_id, session.agent_id, RunKind.FOLLOW_UP, prompt, started_us),
            None,
        )
        await store.runs.finish(
            run_id, status, Usage(), output, error, started_us + took_s * 1_000_000, None
        )
    finally:
        await store.close()


# --- another process ---------------------------------------------------------

DELEGATE = Path(sys.executable).parent / "delegate"


def wait_for_row(data_dir: Path, sql: str, seconds: float = 20.0) -> None:
    """Block until ``sql`` returns a row in the store of ``data_dir`` (read as another
    process would, with plain sqlite3); fail after ``seconds``. For set-up before the
    app runs: in a test body, use :func:`wait_until`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with sqlite3.connect(data_dir / DB_FILENAME) as db:
                if db.execute(sql).fetchone() is not None:
                    return
        except sqlite3.Error:
            pass  # not created yet, or mid-migration
        if time.monotonic() > deadline:
            raise AssertionError(f"no row for {sql!r} after {seconds}s")
        time.sleep(0.05)


async def write_from_another_process(data_dir: Path) -> None:
    """Run ``another_process.py``: a second Python process writes a session to the store."""
    script = Path(__file__).with_name("another_process.py")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(data_dir), cwd=script.parent
    )
    assert await process.wait() == 0


async def insert_running_run(
    data_dir: Path,
    conversation_id: str,
    prompt: str,
    *,
    seconds_ago: int,
    stderr_tail: str,
    quiet_for_s: int,
    run_id: str = "run00000-0000-4000-8000-000000000002",
) -> None:
    """A follow-up of ``conversation_id`` in flight (owned by the calling process) that
    started ``seconds_ago`` and last wrote ``stderr_tail`` ``quiet_for_s`` ago."""
    started_us = FIXED_NOW_US - seconds_ago * 1_000_000
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        session = await store.sessions.get(conversation_id)
        await store.runs.claim_follow_up(
            conversation_id,
            NewRun(run_id, session.agent_id, RunKind.FOLLOW_UP, prompt, started_us),
            None,
        )
        await store.runs.heartbeat([run_id], FIXED_NOW_US)
        await store.runs.record_activity(
            run_id, "", stderr_tail, FIXED_NOW_US - quiet_for_s * 1_000_000
        )
    finally:
        await store.close()


REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"


def realdata_homes(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the real Claude Code and Codex trees to import (writable, so a test
    can append to a transcript): ``(claude dir, codex dir)``."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(REALDATA / "claude", claude)
    shutil.copytree(REALDATA / "codex", codex)
    for path in [*claude.rglob("*"), *codex.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return claude, codex


class _Listed(Exception):
    """Stops an import once its first sessions are listed, before any full read."""


async def list_only(data_dir: Path, claude: Path, codex: Path) -> None:
    """Import's listing pass alone, as a panel sees it during a cold import: the first
    batch of sessions listed from their files' heads and tails, none read in full."""
    from core.importing.importer import import_sources
    from core.importing.report import ImportProgress

    def stop(update: ImportProgress) -> None:
        if update.phase == "listing":
            raise _Listed

    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await import_sources(store, claude, codex, stop, workers=0, list_first_bytes=0)
    except _Listed:
        pass
    finally:
        await store.close()
