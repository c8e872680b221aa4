"""Importing Claude Code and Codex sessions in the background, and the line that says so.

A non-visual widget: it owns the import worker (one at a time) and the note the
status panel shows ("importing 120/3900 files (3%)", or what the import skipped).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from textual import work
from textual.message import Message
from textual.widget import Widget

from core.errors import DelegateError
from core.sources.report import ImportProgress, ImportReport
from tui.workers import ForwardsWorkerErrors

ImportRoots = tuple[Path | None, Path | None]  # (Claude Code dir, Codex dir); None: default
Importer = Callable[
    [Path | None, Path | None, Callable[[ImportProgress], None]], Awaitable[ImportReport]
]


class BackgroundImport(ForwardsWorkerErrors, Widget):
    """Runs an import on request; ``note`` is what the status line should say about it."""

    DEFAULT_CSS = """
    BackgroundImport { display: none; }
    """

    class Progressed(Message):
        """The note changed; ``sessions_changed`` when rows were added or updated
        (the first batch of a run, and its end). Handle with
        ``on_background_import_progressed``."""

        def __init__(self, sessions_changed: bool) -> None:
            super().__init__()
            self.sessions_changed = sessions_changed

    def __init__(self, run_import: Importer, roots: ImportRoots) -> None:
        super().__init__()
        self._run_import = run_import
        self.roots = roots
        self.note = ""
        self.stopped = False

    def stop(self) -> None:
        """The app is closing: report nothing more."""
        self.stopped = True

    @work(group="import", name="importing sessions", exclusive=True, exit_on_error=False)
    async def start(self) -> None:
        """Index on-disk transcripts; the first committed batch shows up at once."""
        shown_first_batch = False

        def progress(update: ImportProgress) -> None:
            nonlocal shown_first_batch
            if self.stopped:
                return
            if update.phase == "reading" and update.files_total:
                percent = 100 * update.bytes_done // max(1, update.bytes_total)
                self.note = f"importing {update.files_done}/{update.files_total} files ({percent}%)"
            first = bool(update.sessions_added + update.sessions_updated) and not shown_first_batch
            shown_first_batch = shown_first_batch or first
            self.post_message(self.Progressed(first))

        self.note = "importing…"
        self.post_message(self.Progressed(False))
        claude_dir, codex_dir = self.roots
        try:
            report = await self._run_import(claude_dir, codex_dir, progress)
        except DelegateError as exc:
            self.note = f"import failed: {exc.message}"
            self.post_message(self.Progressed(False))
            return
        if self.stopped:
            return
        self.note = report.problem_line or ""
        self.post_message(self.Progressed(bool(report.sessions_added or report.sessions_updated)))
