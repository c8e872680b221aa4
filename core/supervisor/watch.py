"""Watching the agents' transcript folders: native file events, or a periodic re-scan.

Claude Code's ``projects`` folder and Codex's ``sessions`` / ``archived_sessions``
are watched with ``watchfiles`` (inotify / FSEvents / ReadDirectoryChangesW),
debounced and recursive; each batch of changed ``.jsonl`` files is imported on
its own (:func:`core.importing.importer.import_files`: appended bytes only).

When a folder cannot be watched (the watch fails to start: inotify limits, a
file system without events; or polling is forced) the watcher falls back to a
full incremental re-scan every ``rescan_s`` and says so, with the reason. A
folder that does not exist yet is checked for every ``rescan_s``; when it
appears it is imported once and watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watchfiles import Change, awatch

from core.config import ContextSettings
from core.errors import DelegateError
from core.events import TranscriptWatching
from core.importing.importer import import_files, import_sources
from core.sources import files as discovery
from core.store import Store

log = logging.getLogger(__name__)

WATCH_STEP_MS = 100
"""How often the watch thread looks at the stop flag (idle cost: a few wake-ups a second)."""

RESTARTS_ALLOWED = 3
RESTART_WINDOW_S = 60.0
"""A watch that breaks after it started is started again (with a catch-up re-scan),
up to this many times in this window; beyond, the watcher falls back to re-scanning."""

OnStatus = Callable[[TranscriptWatching, str | None], None]
OnImported = Callable[[], None]


@dataclass(frozen=True, slots=True)
class Roots:
    """The agents' folders, and the folders in them that hold transcripts."""

    claude: Path
    codex: Path

    @property
    def folders(self) -> tuple[Path, ...]:
        return (
            self.claude / "projects",
            self.codex / "sessions",
            self.codex / "archived_sessions",
        )


def _transcripts_and_new_folders(change: Change, path: str) -> bool:
    return path.endswith(".jsonl") or change == Change.added


def _changed_transcripts(changes: set[tuple[Change, str]]) -> set[str]:
    """The transcript paths in a batch of events, and those inside folders just made.

    A file written into a folder made a moment earlier can come before the
    watch on that folder exists (Codex makes a dated folder each day), so a new
    folder is listed once.
    """
    paths: set[str] = set()
    for change, path in changes:
        if change == Change.deleted:
            continue
        if path.endswith(".jsonl"):
            paths.add(path)
        elif change == Change.added and _is_real_dir(path):
            paths.update(_transcripts_under(path))
    return paths


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _transcripts_under(folder: str) -> list[str]:
    """``.jsonl`` files in a new folder (symlinks not followed, depth bounded)."""
    found: list[str] = []
    top = folder.count(os.sep)
    for here, dirs, names in os.walk(folder, followlinks=False):
        if here.count(os.sep) - top >= discovery.MAX_DEPTH:
            dirs.clear()
        found.extend(os.path.join(here, n) for n in names if n.endswith(".jsonl"))
    return found


class WatchBroke(Exception):
    """The native watch failed after it had started (it is started again)."""


def _cause(exc: BaseException) -> str:
    """What went wrong, from the first leaf of an exception group (the events
    library raises from a task group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


class TranscriptWatcher:
    """Imports transcripts as the agents write them; reports how via ``on_status``."""

    def __init__(
        self,
        store: Store,
        *,
        claude_dir: Path | None,
        codex_dir: Path | None,
        debounce_ms: int,
        force_polling: bool,
        rescan_s: float,
        catch_up: bool = True,
        on_status: OnStatus,
        on_imported: OnImported,
        windows: ContextSettings | None = None,
    ) -> None:
        """``windows``: the ``[context]`` settings whose model windows imports use."""
        self._store = store
        self._windows = windows
        self.roots = Roots(discovery.claude_root(claude_dir), discovery.codex_root(codex_dir))
        self._debounce_ms = debounce_ms
        self._force_polling = force_polling
        self._rescan_s = rescan_s
        self._catch_up = catch_up
        self._on_status = on_status
        self._on_imported = on_imported

    async def run(self, stop: asyncio.Event) -> None:
        """Watch until ``stop`` is set (or the task is cancelled)."""
        if self._force_polling:
            await self._poll(
                stop, f"polling is forced (force_polling); re-scanning every {self._rescan_s:g} s"
            )
            return
        # First an incremental re-scan (what was appended while nobody watched),
        # and again whenever a missing folder appears (what it already holds).
        catch_up = self._catch_up
        breaks: list[float] = []
        while not stop.is_set():
            present = [f for f in self.roots.folders if f.is_dir()]
            if not present:
                names = ", ".join(str(f) for f in self.roots.folders)
                reason = f"no transcript folder exists yet ({names}); checking every "
                reason += f"{self._rescan_s:g} s"
                self._on_status("polling", reason)
                catch_up = True
                if await _wait(stop, self._rescan_s):
                    return
                continue
            folders = ", ".join(str(f) for f in present)
            try:
                catch_up = await self._watch(present, stop, catch_up)
            except WatchBroke as broke:
                if stop.is_set():
                    return
                now = asyncio.get_running_loop().time()
                breaks = [t for t in breaks if now - t < RESTART_WINDOW_S] + [now]
                if len(breaks) > RESTARTS_ALLOWED:
                    reason = f"watching {folders} keeps failing ({broke}); re-scanning every "
                    reason += f"{self._rescan_s:g} s"
                    log.warning("%s", reason)
                    await self._poll(stop, reason)
                    return
                log.warning("watching %s stopped (%s); watching again", folders, broke)
                catch_up = True  # what changed while no watch was in place
            except (OSError, RuntimeError, ExceptionGroup) as exc:
                if stop.is_set():  # stopping: never start a re-scan on the way out
                    return
                reason = f"cannot watch {folders} ({_cause(exc)}); re-scanning every "
                reason += f"{self._rescan_s:g} s"
                log.warning("%s", reason)
                await self._poll(stop, reason)
                return

    async def _watch(self, present: list[Path], stop: asyncio.Event, catch_up: bool) -> bool:
        """Native events on ``present``; True when a missing folder appeared (watch again).

        ``catch_up``: re-scan once the watches are in place (nothing is missed
        between the scan and the first event).

        Raises OSError (or RuntimeError) when the watch cannot start, and
        :class:`WatchBroke` when it fails after it started (e.g. the events library
        meets a path it cannot decode, in a folder another program named).
        """
        missing = [f for f in self.roots.folders if f not in present]
        batches = awatch(
            *present,
            watch_filter=_transcripts_and_new_folders,
            debounce=self._debounce_ms,
            step=WATCH_STEP_MS,
            stop_event=stop,
            rust_timeout=max(1, int(self._rescan_s * 1000)),
            yield_on_timeout=True,
            recursive=True,
            force_polling=False,
        )
        batch: asyncio.Future[set[tuple[Change, str]]] | None = None
        try:
            batch = asyncio.ensure_future(anext(batches))
            # awatch registers its watches in its first step, before it waits in a
            # thread: after one turn of the loop it has either started or failed.
            await asyncio.sleep(0)
            if batch.done() and batch.exception() is not None:
                await batch  # raises why the watch could not start
            self._on_status("watching", None)
            if catch_up:
                await self._rescan()
            while True:
                try:
                    changes = await batch
                except StopAsyncIteration:  # stopped
                    return False
                except (OSError, RuntimeError, ExceptionGroup) as exc:
                    raise WatchBroke(_cause(exc)) from exc
                await self._import(_changed_transcripts(changes))
                if any(f.is_dir() for f in missing):
                    return True
                batch = asyncio.ensure_future(anext(batches))
        finally:
            # The next batch is a task of its own: stop it before closing the
            # generator it runs in (closing a running generator is an error).
            if batch is not None and not batch.done():
                batch.cancel()
                with contextlib.suppress(BaseException):
                    await batch
            with contextlib.suppress(RuntimeError):
                await batches.aclose()

    async def _poll(self, stop: asyncio.Event, reason: str) -> None:
        """The fallback: an incremental re-scan of everything every ``rescan_s``."""
        self._on_status("polling", reason)
        while True:
            await self._rescan()
            if await _wait(stop, self._rescan_s):
                return

    async def _import(self, paths: set[str]) -> None:
        if not paths:
            return
        try:
            read = await import_files(
                self._store, paths, self.roots.claude, self.roots.codex, windows=self._windows
            )
        except DelegateError as exc:
            log.warning("importing %d changed transcript(s) failed: %s", len(paths), exc)
            return
        except Exception:  # a bug in one import must not stop the watching
            log.exception("importing %d changed transcript(s) failed", len(paths))
            return
        if read:
            self._on_imported()

    async def _rescan(self) -> None:
        try:
            report = await import_sources(
                self._store, self.roots.claude, self.roots.codex, windows=self._windows
            )
        except DelegateError as exc:
            log.warning("re-scanning the transcript folders failed: %s", exc)
            return
        except Exception:  # a bug in one re-scan must not stop the next
            log.exception("re-scanning the transcript folders failed")
            return
        if report.files_read:
            self._on_imported()


async def _wait(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` unless ``stop`` is set first; True when stopping."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        return False
    return True
