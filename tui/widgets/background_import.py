"""Importing Claude Code and Codex sessions in the background, and the line that says so.

A non-visual widget: it owns the import worker (one at a time) and the note the
status panel shows ("importing 120/3900 files (3%)", or what the import skipped).
An import a person asked for (f5) ends with a summary of what it found, even when
that is nothing (:attr:`ImportReport.summary_line`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual import work
from textual.message import Message
from textual.widget import Widget

from core.errors import DelegateError
from core.importing.report import SEE_REPORT, ImportProgress, ImportReport
from tui.shared.workers import ForwardsWorkerErrors

SCAN_NOTE_AFTER_S = 0.5
"""A scan this long (a huge tree, a slow disk) is shown; a usual one is not."""
SCANNING_NOTE = "looking for new sessions…"

ImportRoots = tuple[Path | None, Path | None]  # (Claude Code dir, Codex dir); None: default
Importer = Callable[
    [Path | None, Path | None, Callable[[ImportProgress], None]], Awaitable[ImportReport]
]


async def settled(window_s: float = 0.1, max_wait_s: float = 2.0) -> None:
    """Wait until this process is mostly idle (at most ``max_wait_s``).

    The import's walk runs in a thread, but it shares the interpreter with the
    screen: started while the panel is still drawing its start (the status, the
    history, the supervisor), each waits on the other. Idle means a ``window_s``
    in which the process used under a tenth of the time on the CPU; the start's
    work has pauses of tens of milliseconds (a read, a worker's hand-over), so a
    shorter window mistakes one of those for the end of it (docs/benchmarks.md).
    """
    deadline = time.monotonic() + max_wait_s
    while time.monotonic() < deadline:
        cpu = time.process_time()
        await asyncio.sleep(window_s)
        if time.process_time() - cpu < window_s / 10:
            return


def announcement(report: ImportReport) -> list[str]:
    """What f5's notice says: the summary, then the unknown types and the damage this
    import found, and once, where their details are."""
    found = [line for line in (report.unknown_line, report.damage_line) if line]
    lines = [report.summary_line, *(line.removesuffix(SEE_REPORT) for line in found)]
    return [*lines, "Details: delegate import --report"] if found else lines


class BackgroundImport(ForwardsWorkerErrors, Widget):
    """Runs an import on request; ``note`` is what the status line should say about it."""

    DEFAULT_CSS = """
    BackgroundImport { display: none; }
    """

    class Progressed(Message):
        """The note changed to ``note``; ``sessions_changed`` when rows were added or
        updated (the first batch of a run, and its end); ``final`` when the run is
        over. Handle with ``on_background_import_progressed``."""

        def __init__(self, note: str, sessions_changed: bool, *, final: bool = False) -> None:
            super().__init__()
            self.note = note
            self.sessions_changed = sessions_changed
            self.final = final

    class Announced(Message):
        """An import a person asked for ended: ``lines`` say what it found (the
        first is the summary); ``failed`` when it could not run. Handle with
        ``on_background_import_announced``."""

        def __init__(self, lines: list[str], *, failed: bool = False) -> None:
            super().__init__()
            self.lines = lines
            self.failed = failed

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
    async def start(self, after_idle: bool = False, announce: bool = False) -> None:
        """Index on-disk transcripts; the first committed batch shows up at once.

        Quiet while nothing needs reading: a warm start whose transcripts did not
        change leaves the screen alone, so the panel does no work beside the scan
        (its walk shares the interpreter with the screen; docs/benchmarks.md). A
        scan still going after ``SCAN_NOTE_AFTER_S`` says so. ``after_idle``: a
        refresh in the background of a panel that shows rows already waits until
        the panel has settled; an empty panel (a cold start) or a person asking
        (f5) does not wait. ``announce``: a person asked (f5); say at the end what
        the import found (:class:`Announced`), nothing new included.
        """
        if after_idle:
            await settled()
        if self.stopped:
            return
        shown_first_batch = False
        scanning = self.set_timer(SCAN_NOTE_AFTER_S, lambda: self._say(SCANNING_NOTE))

        def progress(update: ImportProgress) -> None:
            nonlocal shown_first_batch
            scanning.stop()
            if self.stopped or update.phase == "done":
                return
            changed = update.sessions_added + update.sessions_updated + update.sessions_listed
            first = bool(changed) and not shown_first_batch
            shown_first_batch = shown_first_batch or first
            if update.phase == "listing":
                self._say(f"listing {update.files_done}/{update.files_total} files", first)
            elif update.files_total:
                percent = 100 * update.bytes_done // max(1, update.bytes_total)
                self._say(
                    f"importing {update.files_done}/{update.files_total} files ({percent}%)", first
                )

        claude_dir, codex_dir = self.roots
        try:
            report = await self._run_import(claude_dir, codex_dir, progress)
        except DelegateError as exc:
            self._say(f"import failed: {exc.message}", final=True)
            if announce and not self.stopped:
                self.post_message(self.Announced([f"Import failed: {exc.message}"], failed=True))
            return
        finally:
            scanning.stop()
        if self.stopped:
            return
        changed = bool(report.sessions_added or report.sessions_updated)
        self._say(report.problem_line or report.unknown_line or "", changed, final=True)
        if announce:
            self.post_message(self.Announced(announcement(report)))

    def _say(self, note: str, sessions_changed: bool = False, *, final: bool = False) -> None:
        """Tell the panel when the note or the sessions changed; nothing otherwise."""
        if self.stopped or (note == self.note and not sessions_changed):
            return
        self.note = note
        self.post_message(self.Progressed(note, sessions_changed, final=final))
