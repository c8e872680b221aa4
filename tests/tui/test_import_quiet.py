"""The background import says something only when there is something to say.

A warm start whose transcripts did not change must leave the screen alone: the
status panel is not asked again and nothing is re-laid out while the walk runs
(the walk shares the interpreter with the screen). A scan that takes long (a huge
tree, a slow disk) says so; an import that reads files counts them as before.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from textual.app import App, ComposeResult
from textual.message import Message
from tui_support import realdata_homes, wait_until

from core.importing.report import ImportProgress, ImportReport
from tui.widgets.background_import import SCAN_NOTE_AFTER_S, SCANNING_NOTE, BackgroundImport
from tui.widgets.session_list import SessionList


def _import_done(app: App[None]) -> bool:
    return all(w.is_finished for w in app.workers if w.group == "import")


async def test_a_re_scan_with_nothing_new_posts_nothing_and_a_change_is_shown(
    tmp_path: Path,
    make_app,  # type: ignore[no-untyped-def]
) -> None:
    claude, codex = realdata_homes(tmp_path)
    heard: list[Message] = []
    app = make_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48), message_hook=heard.append) as pilot:
        listed = app.screen.query_one(SessionList)
        await wait_until(pilot, lambda: bool(listed.sessions), seconds=20, what="first import")
        await wait_until(pilot, lambda: _import_done(app), seconds=20, what="import done")
        first = next(s for s in listed.sessions if s.source == "claude-code")

        heard.clear()
        await pilot.press("f5")  # a re-scan: nothing changed on disk
        await wait_until(pilot, lambda: _import_done(app), seconds=20, what="re-scan done")
        assert not [m for m in heard if isinstance(m, BackgroundImport.Progressed)]

        # A transcript grows: the re-scan reads it and the panel hears of it.
        path = next(claude.rglob(f"{first.conversation_id}.jsonl"), None)
        assert path is not None
        line = {
            "type": "user",
            "sessionId": first.conversation_id,
            "uuid": "grown-1",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "cwd": first.cwd,
            "message": {"role": "user", "content": "one more prompt"},
        }
        with path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        heard.clear()
        await pilot.press("f5")
        await wait_until(pilot, lambda: _import_done(app), seconds=20, what="re-scan done")
        progressed = [m for m in heard if isinstance(m, BackgroundImport.Progressed)]
        assert any(m.sessions_changed for m in progressed)
        assert app.screen.query_one(BackgroundImport).note == ""


class _Host(App[None]):
    def __init__(self, importer: BackgroundImport) -> None:
        super().__init__()
        self.importer = importer
        self.notes: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.importer

    def on_background_import_progressed(self, event: BackgroundImport.Progressed) -> None:
        self.notes.append(event.note)


async def test_a_long_scan_is_named_and_the_note_clears_when_it_ends() -> None:
    release = asyncio.Event()

    async def slow_scan(
        _claude: Path | None, _codex: Path | None, progress: object
    ) -> ImportReport:
        await release.wait()  # the walk of a huge tree: nothing to read in the end
        assert callable(progress)
        progress(ImportProgress(phase="scanning"))
        return ImportReport(started_at=datetime.now(UTC), duration_s=2.0)

    host = _Host(BackgroundImport(slow_scan, (None, None)))
    async with host.run_test() as pilot:
        host.importer.start()
        # Not ``wait_until``: it lets workers finish, and this one waits on us.
        deadline = asyncio.get_running_loop().time() + SCAN_NOTE_AFTER_S + 5
        while host.notes != [SCANNING_NOTE]:
            assert asyncio.get_running_loop().time() < deadline, host.notes
            await pilot.pause(0.05)
        release.set()
        await wait_until(pilot, lambda: _import_done(host), seconds=5, what="scan done")
        await pilot.pause()
        assert host.notes == [SCANNING_NOTE, ""]
        assert host.importer.note == ""


async def test_an_import_that_reads_counts_its_files() -> None:
    async def reading(_claude: Path | None, _codex: Path | None, progress: object) -> ImportReport:
        assert callable(progress)
        progress(ImportProgress(phase="scanning", files_total=4, bytes_total=400))
        progress(
            ImportProgress(
                phase="reading",
                files_total=4,
                files_done=2,
                bytes_total=400,
                bytes_done=100,
                sessions_added=2,
            )
        )
        progress(ImportProgress(phase="done", files_total=4, files_done=4, sessions_added=4))
        return ImportReport(started_at=datetime.now(UTC), duration_s=0.1, sessions_added=4)

    host = _Host(BackgroundImport(reading, (None, None)))
    async with host.run_test() as pilot:
        host.importer.start()
        await wait_until(pilot, lambda: _import_done(host), seconds=5, what="import done")
        await pilot.pause()
        assert host.notes == [
            "importing 0/4 files (0%)",
            "importing 2/4 files (25%)",
            "",
        ]
