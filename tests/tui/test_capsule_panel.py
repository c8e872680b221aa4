"""The panel and capsules: the key that opens the capsule editor for the highlighted
session, and the capsule a session was launched with, in the preview header and the
transcript view's details (stale marked)."""

from __future__ import annotations

from pathlib import Path

import pytest
from panel_capsule_data import (
    CAPSULES,
    DRAFT_NAME,
    FRESH,
    FRESH_DIGEST,
    LAUNCHED,
    PLAIN,
    STALE_DIGEST,
    STALE_RUN,
    insert_capsule_sessions,
)
from textual.pilot import Pilot
from tui_support import (
    FIXED_NOW,
    AppFactory,
    preview,
    session_list,
    started,
    static_text,
    wait_until,
)

from core.events import CapsuleStale
from core.models import DocumentStatus
from tui.app import DelegateApp
from tui.capsules.editor import CapsuleEditorScreen
from tui.screens.session_picker import SessionPickerScreen
from tui.screens.transcript import TranscriptScreen

EDITOR_KEY = "f2"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
async def capsule_dir(data_dir: Path, repo: Path) -> Path:
    await insert_capsule_sessions(data_dir, repo)
    return data_dir


async def _highlight(app: DelegateApp, pilot: Pilot[None], cid: str) -> None:
    assert session_list(app).highlight(cid)
    await wait_until(
        pilot,
        lambda: cid in static_text(preview(app).header),
        what=f"{cid[:8]} in the preview",
    )


async def test_the_editor_key_opens_a_new_capsule_for_the_highlighted_session(
    capsule_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, LAUNCHED)
        await pilot.press(EDITOR_KEY)
        await wait_until(
            pilot, lambda: isinstance(app.screen, CapsuleEditorScreen), what="the editor"
        )
        editor = app.screen
        assert isinstance(editor, CapsuleEditorScreen)
        assert editor.repo == repo.resolve()
        assert editor.session == LAUNCHED
        assert editor.path is None  # no draft of its own: a new capsule
        assert editor.orchestrator is app.orchestrator
        # A new capsule is unsaved: the first escape warns, the second leaves.
        await pilot.press("escape", "escape")
        await wait_until(
            pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="back in the panel"
        )


async def test_the_editor_key_opens_the_draft_the_session_wrote(
    capsule_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    """A capsule the agent drafted (``capsule request``) is what there is to review."""
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, PLAIN)
        await pilot.press(EDITOR_KEY)
        await wait_until(
            pilot, lambda: isinstance(app.screen, CapsuleEditorScreen), what="the editor"
        )
        editor = app.screen
        assert isinstance(editor, CapsuleEditorScreen)
        assert editor.path == repo / CAPSULES / DRAFT_NAME
        assert editor.session == PLAIN


async def test_the_editor_key_says_so_when_the_sessions_folder_is_gone(
    capsule_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    (repo / ".delegate/capsules/feature-billing").joinpath(DRAFT_NAME).unlink()
    for folder in sorted(repo.rglob("*"), reverse=True):
        folder.unlink() if folder.is_file() else folder.rmdir()
    repo.rmdir()
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, LAUNCHED)
        await pilot.press(EDITOR_KEY)
        await wait_until(
            pilot,
            lambda: any("no longer exists" in str(n.message) for n in app._notifications),
            what="a note that the folder is gone",
        )
        assert isinstance(app.screen, SessionPickerScreen)


async def test_the_preview_header_names_the_capsule_and_marks_a_stale_one(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, LAUNCHED)
        header = static_text(preview(app).header)
        assert f"capsule 1a2b3c4d · digest {FRESH_DIGEST[7:15]}" in header
        assert "stale" not in header
        await _highlight(app, pilot, STALE_RUN)
        await wait_until(
            pilot,
            lambda: "stale" in static_text(preview(app).header),
            what="the stale mark",
        )
        header = static_text(preview(app).header)
        assert f"capsule 5e6f7a8b · digest {STALE_DIGEST[7:15]} · stale" in header
        await _highlight(app, pilot, PLAIN)
        assert "capsule" not in static_text(preview(app).header)


async def test_the_transcript_details_name_the_capsule_and_its_file(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, STALE_RUN)
        await pilot.press("ctrl+t")
        await wait_until(
            pilot, lambda: isinstance(app.screen, TranscriptScreen), what="the transcript"
        )
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        await wait_until(pilot, lambda: screen.details_loaded, what="the details")
        details = static_text(screen.details)
        assert (
            f"capsule 5e6f7a8b · digest {STALE_DIGEST[7:15]}"
            " · feature-billing/20261120T101500Z.md · stale (references changed)"
        ) in details


async def test_a_capsule_gone_stale_is_marked_in_the_header_on_show(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    """The supervisor marks the capsule stale (registry status, then the event): the
    header of the session that carried it says so without moving the highlight."""
    app = make_app(capsule_dir)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await _highlight(app, pilot, LAUNCHED)
        assert "stale" not in static_text(preview(app).header)
        await app.orchestrator.store.documents.set_status(FRESH, DocumentStatus.STALE)
        app.orchestrator.bus.publish(
            CapsuleStale(
                at=FIXED_NOW,
                conversation_id="",
                document_id=FRESH,
                path="/repo/.delegate/capsules/feature-billing/20261121T205000Z.md",
                changed=("src/app.py",),
            )
        )
        await wait_until(
            pilot,
            lambda: "digest 9f86d081 · stale" in static_text(preview(app).header),
            what="the stale mark",
        )
