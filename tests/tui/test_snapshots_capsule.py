"""Snapshots of the capsule editor, one per state a person meets (in
``snapshots/test_snapshots_capsule/``): the empty template, filled, near and over budget,
problems, a secret, a stale reference, the inbox and highlight pickers, the agent's
draft as a diff, saved."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from editor_support import (
    SESSION,
    checked,
    drafter_config,
    editor,
    editor_app,
    insert_session,
    make_repo,
    opened,
    until,
)
from textual.pilot import Pilot
from tui_support import FIXED_NOW

from core.capsules.inbox import remember
from tui.modals.capsule_pickers import PickerModal
from tui.modals.draft_diff import DraftDiffModal
from tui.modals.new_delegate import NewDelegate

SnapCompare = Callable[..., bool]
SIZE = (130, 40)
# The repository sits at the same path on every machine: nothing machine-specific shows.
FIXED_REPO = Path("/tmp/delegate-snapshot-capsule/repo")

FILLED = {
    "Mission Snapshot": "- **User intent:** author capsules from the keyboard\n"
    "- **Current status:** editor screen landed; snapshots next",
    "Key Decisions & Rationale": "1. Checks run in a worker thread, debounced: typing "
    "never waits on git",
    "Active Workstreams": "- Editor → outline, meter, problems; owner: us; no blockers",
    "Pending Actions": "- [ ] Snapshot every state (us, before landing)",
    "Knowledge Base": "- tui/screens/capsule_editor.py: the screen\n"
    "- core/capsules/check.py: every check in one call",
    "Risks & Watchpoints": "- Timing in tests: wait on conditions, never sleep",
    "Transcript Highlights": '- 2026-11-21T20:55Z user: "Keep the problems list jumpable" '
    "(message 5e55a0c1)",
    "Exploratory Threads & User Preferences": "- **ux**: a diff view for drafts — next "
    "step: try it",
}


@pytest.fixture
def repo() -> Iterator[Path]:
    shutil.rmtree(FIXED_REPO.parent, ignore_errors=True)
    yield make_repo(FIXED_REPO, {"README.md": "hello\n", "src/core.py": "x = 1\n"})
    shutil.rmtree(FIXED_REPO.parent, ignore_errors=True)


def filled(text: str, *, budget: int | None = None) -> str:
    """The template with every section written (and ``budget`` as its token budget)."""
    for title, body in FILLED.items():
        text = re.sub(
            rf"(?m)^# {re.escape(title)}\n<!--.*-->\n",
            lambda m, body=body: f"{m.group(0)}{body}\n",
            text,
        )
    text = re.sub(
        r"(?m)^primary_objective:.*$", 'primary_objective: "Capsule editor snapshots"', text
    )
    if budget is not None:
        text = re.sub(r"(?m)^token_budget:.*$", f"token_budget: {budget}", text)
    return text


async def _write(pilot: Pilot[Any], text: str, line: int | None = None) -> None:
    screen = editor(pilot)
    screen.replace_text(text)
    await checked(pilot)
    screen.go_to_line(line or 1)
    await pilot.pause()


def _snap(snap_compare: SnapCompare, app: Any, run_before: Any) -> bool:
    return bool(snap_compare(app, terminal_size=SIZE, run_before=run_before))


def test_empty_template(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await opened(pilot)

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_filled(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await _write(pilot, filled(screen.text_area.text))

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_near_budget(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        template = screen.text_area.text
        await _write(pilot, filled(template))
        budget = int(screen.report.tokens / 0.85)
        await _write(pilot, filled(template, budget=budget))
        assert screen.report.level == "near"

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_over_budget(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await _write(pilot, filled(screen.text_area.text, budget=100))
        assert screen.report.level == "over"

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_problems(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    """Sections out of order and a highlight that cites nothing; the list jumps."""

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        text = filled(screen.text_area.text).replace("(message 5e55a0c1)", "")
        text = text.replace("# Pending Actions", "# Pending Things")
        await _write(pilot, text)
        screen.problems.focus()
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_secret_found(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        text = filled(screen.text_area.text).replace(
            "- core/capsules/check.py", f"- deploy with {token}\n- core/capsules/check.py"
        )
        await _write(pilot, text)
        secret = next(p for p in screen.report.problems if p.code.startswith("secret_"))
        screen.go_to_line(secret.line)
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_stale_reference(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        text = filled(screen.text_area.text).replace(
            "version: 0.1\n",
            "version: 0.1\nreferences:\n  - path: src/core.py\n"
            "    blob: 0000000000000000000000000000000000000000\n",
        )
        await _write(pilot, text)
        stale = next(p for p in screen.report.problems if p.code == "reference_stale")
        screen.go_to_line(stale.line)
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_inbox_picker(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    remember(
        repo,
        "Try a diff view for drafts",
        topic="ux",
        next_step="sketch it",
        tags=("editor",),
        now=FIXED_NOW,
    )
    remember(
        repo, "The user prefers short bullets", topic=None, next_step=None, tags=(), now=FIXED_NOW
    )

    async def run_before(pilot: Pilot[Any]) -> None:
        await opened(pilot)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerModal), what="picker")
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


def test_highlight_picker(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    drafter_config(data_dir)
    asyncio.run(insert_session(data_dir, repo))

    async def run_before(pilot: Pilot[Any]) -> None:
        await opened(pilot)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerModal), what="picker")
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo, session=SESSION), run_before)


def test_agent_draft_diff(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    drafter_config(data_dir)
    asyncio.run(insert_session(data_dir, repo))

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        mission = next(e for e in screen.report.outline if e.title == "Mission Snapshot")
        screen.go_to_line(mission.line + 1)
        await pilot.press("ctrl+g")
        await until(
            pilot, lambda: isinstance(pilot.app.screen, DraftDiffModal), seconds=20, what="diff"
        )
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo, session=SESSION), run_before)


def test_saved(snap_compare: SnapCompare, data_dir: Path, repo: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await _write(pilot, filled(screen.text_area.text))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.saved_path is not None, seconds=30, what="the save")
        await pilot.pause()

    assert _snap(snap_compare, editor_app(data_dir, repo), run_before)


@pytest.mark.parametrize("size", [SIZE, (80, 24)], ids=["wide", "80x24"])
def test_launch_form_from_the_editor(
    snap_compare: SnapCompare, data_dir: Path, repo: Path, size: tuple[int, int]
) -> None:
    """ctrl+l: the form names the capsule being edited, the one the launch injects."""

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await _write(pilot, filled(screen.text_area.text))
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(pilot.app.screen, NewDelegate), what="the form")
        await pilot.press(*"carry on")
        await pilot.pause()

    assert snap_compare(editor_app(data_dir, repo), terminal_size=size, run_before=run_before)
