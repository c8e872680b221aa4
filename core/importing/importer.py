"""The incremental import: stat every transcript, read only what changed, commit in batches.

1. Discover files (scandir only) and sort them newest first.
2. Compare ``(size, mtime_ns)`` with the index: unchanged files are not opened.
3. Changed files are read from their saved offset (appended) or from 0
   (new, truncated, or rewritten: the worker checks a hash of the first 4 KiB).
4. With many never-read files (a first import), every session in them is first
   listed from its file's head and tail (:mod:`core.sources.listing`), so the
   whole history is on the panel within seconds; each is marked ``counting``.
5. Files are parsed in batches, in worker processes when there is enough to
   read; each batch is committed in one transaction in this process, newest
   files first, so a front end listing sessions sees the newest rows early.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import sqlite3
import sys
import time
import types
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import aiosqlite
import orjson

from core import ids, process_identity
from core.atomic_files import disk_full_as_error
from core.config import ContextSettings
from core.context.windows import window_for
from core.errors import ImportBusy, StoreBusy
from core.importing.report import (
    FileSkips,
    ImportProgress,
    ImportReport,
    SkippedEntry,
    UnknownLineType,
    UnreadableFile,
)
from core.models import WindowSource
from core.search.indexing import TranscriptIndexer, TranscriptTexts
from core.sources import claude
from core.sources import files as discovery
from core.sources.common import SessionFacts, clamp_us
from core.sources.listing import sketch_batch
from core.sources.safe_files import is_utf8_name
from core.sources.worker import FileResult, FileTask, parse_batch, start_worker
from core.store import ImportedSession, SourceFileRow, SourceFileUpdate, Store
from core.store.imports import file_stats_at, record_import_samples

FIRST_BATCH_FILES, FIRST_BATCH_BYTES = 24, 4 * 1024 * 1024
BATCH_FILES, BATCH_BYTES = 256, 24 * 1024 * 1024
POOL_THRESHOLD_BYTES = 32 * 1024 * 1024
"""Below this much to read, parsing in a thread beats starting worker processes."""
MAX_WORKERS = 4
LIST_FIRST_BYTES = POOL_THRESHOLD_BYTES
"""When the files the index has never read hold this much, every session in them is
listed from its file's head and tail before any file is read in full."""
LIST_BATCH_FILES = 512
SKIPS_IN_REPORT = 200
IMPORT_LOCK_FILENAME = "import.lock"
LOCK_POLL_S = 0.05
IMPORT_LOCK_WAIT_S = 300.0
"""How long an import waits for another to finish (then ``store_busy``, naming it)."""
CODEX_DATE_DEPTH = 3  # sessions/<year>/<month>/<day>

ProgressCallback = Callable[[ImportProgress], None]


def _discover(
    claude_dir: Path,
    codex_dir: Path,
    index: Path | Iterable[tuple[str, int, int]] = (),
) -> tuple[discovery.Discovery, set[str]]:
    """Walk both trees; keep only the files whose ``(size, mtime_ns)`` differ from the
    index's, newest first. Also: which kept files the index knows.

    ``index``: the store's file (its stats are read here, see
    :func:`core.store.imports.file_stats_at`) or its ``(path, size, mtime_ns)``
    rows. Runs in a thread: the query, the walk, the comparison and the sort
    never touch the event loop, and an unchanged file is counted, not held.
    """
    if isinstance(index, Path):
        known = file_stats_at(index)
    else:
        known = {str(path): (int(size), int(mtime)) for path, size, mtime in index}
    found = discovery.Discovery(known=known)
    discovery.discover_claude(claude_dir, found)
    discovery.discover_codex(codex_dir, found)
    found.files.sort(key=lambda f: (f.mtime_ns, f.path), reverse=True)
    return found, {f.path for f in found.files if f.path in known}


def _batches(tasks: list[FileTask]) -> Iterator[list[FileTask]]:
    """Small first batch (the first rows appear fast), then bigger ones."""
    batch: list[FileTask] = []
    size = 0
    limit_files, limit_bytes = FIRST_BATCH_FILES, FIRST_BATCH_BYTES
    for task in tasks:
        batch.append(task)
        size += max(0, task.size - task.start)
        if len(batch) >= limit_files or size >= limit_bytes:
            yield batch
            batch, size = [], 0
            limit_files, limit_bytes = BATCH_FILES, BATCH_BYTES
    if batch:
        yield batch


def _worker_count(requested: int | None, to_read: int) -> int:
    if requested is not None:
        return max(0, requested)
    cores = os.cpu_count() or 1
    if cores < 2 or to_read < POOL_THRESHOLD_BYTES:
        return 0
    return min(cores, MAX_WORKERS)


def _pool_context() -> multiprocessing.context.BaseContext:
    # Not fork: the front end runs threads (aiosqlite, Textual) that a fork would copy mid-lock.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


@contextlib.contextmanager
def _usable_stderr() -> Iterator[None]:
    """Lend multiprocessing the real stderr while it starts its helper processes.

    Its resource tracker hands ``sys.stderr.fileno()`` to the child; under Textual
    (which swaps in a capture whose ``fileno()`` is -1) that raises ValueError
    ("bad value(s) in fds_to_keep") and the pool never starts.
    """
    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable or sys.__stderr__ is None:
        yield
        return
    with contextlib.redirect_stderr(sys.__stderr__):
        yield


@contextlib.contextmanager
def _light_main() -> Iterator[None]:
    """Start worker processes that do not import this process's main module.

    A forkserver (or spawn) child runs the parent's ``__main__`` script again before
    its first task: for ``delegate`` that is the CLI, the app and every module they
    pull in (seconds of CPU per worker on a loaded machine), none of which parsing
    needs. While processes start, ``__main__`` is a bare module with no file, so a
    child imports only what unpickling its tasks asks for (``core.sources.worker``).
    Nothing is awaited inside: the event loop never sees the stand-in.
    """
    real = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if real is not None:
            sys.modules["__main__"] = real


class _Run:
    """The running totals of one import and the batch commit."""

    def __init__(
        self,
        store: Store,
        progress: ProgressCallback | None,
        t0: float,
        windows: ContextSettings | None = None,
    ) -> None:
        self.store = store
        self.windows = windows or ContextSettings()  # [context] windows extend the model table
        self.progress = progress
        self.t0 = t0
        self.claimed: set[str] = set()  # conversation ids written by a newer file this run
        self.listed_claimed: set[str] = set()  # the same, for the listing pass
        self.listed_new: set[str] = set()  # sessions the listing pass added, not yet read in full
        self.listing_s: float | None = None
        self.files_listed = self.files_to_list = 0
        self.search_text = True  # index prompts and replies for full-content search
        self.first_batch_s: float | None = None
        self.files_done = self.bytes_done = self.bytes_total = self.files_total = 0
        self.counts = dict.fromkeys(
            (
                "files_read",
                "files_rewritten",
                "files_without_session",
                "bytes_read",
                "head_bytes_read",
                "sessions_added",
                "sessions_updated",
                "sessions_listed",
                "sessions_skipped_dismissed",
                "sessions_skipped_busy",
                "sessions_skipped_invalid_id",
                "malformed_lines",
                "unknown_lines",
                "oversized_lines",
                "timestamps_ignored",
            ),
            0,
        )
        self.unreadable: list[UnreadableFile] = []
        self.unknown_types: Counter[tuple[str, str, str]] = Counter()  # (source, type, version)

    def _session(self, r: FileResult, f: SessionFacts) -> ImportedSession:
        limit, source = window_for(
            f.model, recorded=f.context_limit or None, configured=None, settings=self.windows
        )
        if source is WindowSource.UNKNOWN:
            limit = 0  # no window recorded, no model known: none is claimed
        return ImportedSession.of(
            f,
            created_us=f.created_us or clamp_us(r.mtime_ns // 1000),
            last_us=f.last_us or clamp_us(r.mtime_ns // 1000),
            bytes=r.size,
            context_limit=limit,
            window_source=source,
        )

    def _update(self, r: FileResult) -> SourceFileUpdate:
        if r.error is not None:
            self.unreadable.append(UnreadableFile(path=r.path, reason=r.error))
            return SourceFileUpdate(r.path, r.source, r.size, r.mtime_ns, error=r.error)
        c = self.counts
        c["files_read"] += 1
        c["files_rewritten"] += r.restarted
        c["bytes_read"] += r.bytes_read
        c["head_bytes_read"] += r.head_bytes_read
        c["malformed_lines"] += r.new_malformed
        c["unknown_lines"] += r.new_unknown
        for (kind, version), n in r.unknown_types.items():
            self.unknown_types[(r.source, kind, version)] += n
        c["oversized_lines"] += r.new_oversized
        c["timestamps_ignored"] += r.new_odd_timestamps
        session = None
        write = True
        if r.invalid_id is not None:
            c["sessions_skipped_invalid_id"] += 1
        elif r.facts is None:
            c["files_without_session"] += 1
        else:
            session = self._session(r, r.facts)
            write = session.conversation_id not in self.claimed
            self.claimed.add(session.conversation_id)
        return SourceFileUpdate(
            path=r.path,
            source=r.source,
            size=r.size,
            mtime_ns=r.mtime_ns,
            offset=r.offset,
            head_len=r.head_len,
            head_hash=r.head_hash,
            state_json=_state_json(r.state),
            malformed=r.malformed,
            unknown=r.unknown,
            oversized=r.oversized,
            facts=session,
            write_session=write,
        )

    async def commit(self, results: list[FileResult]) -> None:
        updates = [self._update(r) for r in results]
        now_us = int(time.time() * 1_000_000)
        index = _search_index(results) if self.search_text else None

        async def also(db: aiosqlite.Connection) -> None:
            """In the batch's transaction: its search texts and context samples."""
            if index is not None:
                await index(db)
            await record_import_samples(
                db,
                [
                    (f.conversation_id, f.samples, f.context_limit, f.last_us, r.from_start)
                    for r, u in zip(results, updates, strict=True)
                    if (f := u.facts) is not None and u.write_session and f.context_known
                ],
            )

        done = await self.store.imports.apply(updates, now_us, also=also)
        if self.first_batch_s is None:
            self.first_batch_s = time.perf_counter() - self.t0
        # A session the listing pass added is new to this import, read in full or not.
        written = (u.facts.conversation_id for u in updates if u.facts and u.write_session)
        listed = self.listed_new.intersection(written)
        self.listed_new -= listed
        c = self.counts
        c["sessions_added"] += done.added + min(len(listed), done.updated)
        c["sessions_updated"] += done.updated - min(len(listed), done.updated)
        c["sessions_skipped_dismissed"] += done.skipped_dismissed
        c["sessions_skipped_busy"] += done.skipped_busy
        self.files_done += len(results)
        self.bytes_done += sum(r.bytes_read for r in results)
        self.report("reading")

    async def commit_listing(self, results: list[FileResult]) -> None:
        """Rows for sessions the index has never read, from their files' heads and tails.

        Each file is recorded as needing a full read (size -1: the next scan reads it
        again if this import stops first) with where its session is, so a preview
        finds the transcript. Titles are indexed for search; prompts, replies and
        context samples come with the full read.
        """
        updates = []
        for r in results:
            if r.error is not None or r.facts is None:
                continue  # the full read reports it
            session = replace(self._session(r, r.facts), counting=True)
            write = session.conversation_id not in self.listed_claimed
            self.listed_claimed.add(session.conversation_id)
            updates.append(
                SourceFileUpdate(
                    path=r.path,
                    source=r.source,
                    size=-1,
                    mtime_ns=r.mtime_ns,
                    state_json=_state_json(r.state),
                    facts=session,
                    write_session=write,
                )
            )
        titles = _search_index(results) if self.search_text else None  # no texts: titles
        done = await self.store.imports.apply(updates, int(time.time() * 1_000_000), also=titles)
        if self.first_batch_s is None and done.added:
            self.first_batch_s = time.perf_counter() - self.t0
        self.listed_new.update(done.added_ids)
        self.counts["sessions_listed"] += done.added
        self.files_listed += len(results)
        if self.files_listed >= self.files_to_list:
            self.listing_s = time.perf_counter() - self.t0
        self.report("listing")

    def report(self, phase: Literal["scanning", "listing", "reading", "done"]) -> None:
        if self.progress is None:
            return
        if phase == "listing":
            self.progress(
                ImportProgress(
                    phase=phase,
                    files_total=self.files_to_list,
                    files_done=self.files_listed,
                    sessions_listed=self.counts["sessions_listed"],
                )
            )
            return
        self.progress(
            ImportProgress(
                phase=phase,
                files_total=self.files_total,
                files_done=self.files_done,
                bytes_total=self.bytes_total,
                bytes_done=self.bytes_done,
                sessions_added=self.counts["sessions_added"],
                sessions_updated=self.counts["sessions_updated"],
                sessions_listed=self.counts["sessions_listed"],
            )
        )


def _state_json(state: dict[str, object]) -> str:
    """A file's parse state as stored: orjson (a tenth of the main process's CPU in
    an import went to ``json.dumps``), the standard encoder for what it refuses
    (an integer past 64 bits)."""
    try:
        return orjson.dumps(state).decode()
    except orjson.JSONEncodeError:
        return json.dumps(state, separators=(",", ":"))


def _search_index(results: list[FileResult]) -> TranscriptIndexer:
    """The search index step of a batch: the texts each file's read found."""
    return TranscriptIndexer(
        [
            TranscriptTexts(r.facts.conversation_id, r.path, r.from_start, r.texts)
            for r in results
            if r.facts is not None and r.error is None
        ]
    )


def read_task(f: discovery.FoundFile) -> FileTask:
    """The task of reading a found file from its start."""
    return FileTask(
        f.path,
        f.source,
        f.size,
        f.mtime_ns,
        f.id_hint,
        subagent=f.subagent,
        parent_hint=f.parent_hint,
        meta_path=f.meta_path,
    )


def _plan(files: Iterable[discovery.FoundFile], rows: dict[str, SourceFileRow]) -> list[FileTask]:
    """A read task per changed file: from its saved offset when it grew, else from 0."""
    tasks = []
    for f in files:
        row = rows.get(f.path)
        base = read_task(f)
        if row is not None and row.size < 0 and row.offset == 0:
            row = None  # listed from its head and tail only (an import stopped): never read
        if row is not None and row.state and f.size >= row.offset:
            base = replace(
                base,
                start=row.offset,
                head_len=row.head_len,
                head_hash=row.head_hash,
                state=row.state,
                counts=row.counts,
            )
        elif row is not None and row.state:
            base = replace(base, reread=True)
        tasks.append(base)
    return tasks


@contextlib.asynccontextmanager
async def import_lock(
    data_dir: Path, *, wait: bool = True, wait_s: float | None = None
) -> AsyncIterator[None]:
    """One import at a time per data folder, across tasks, threads and processes.

    An exclusive ``flock`` on a lock file in the data folder: a lock belongs to
    an open file, so two imports of one process exclude each other as two
    processes do. Taken by polling (never a blocking call a cancel cannot reach),
    for at most ``wait_s`` (default :data:`IMPORT_LOCK_WAIT_S`): then
    :class:`~core.errors.StoreBusy` naming the holder (its pid is in the file).
    ``wait=False``: :class:`ImportBusy` at once when another holds it (a hook).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: imports are not serialised
        yield
        return
    lock = data_dir / IMPORT_LOCK_FILENAME
    with disk_full_as_error(data_dir, f"cannot create {IMPORT_LOCK_FILENAME}"):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        waited = IMPORT_LOCK_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + waited
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise ImportBusy(
                        "another delegate process is importing transcripts (the import"
                        " lock is held); this import is left to it"
                    ) from None
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                    raise StoreBusy(
                        f"another import (process {holder or 'unknown'}) held the import "
                        f"lock {lock} for {waited:.0f} s; "
                        "try again when it has finished"
                    ) from None
                await asyncio.sleep(LOCK_POLL_S)
        with contextlib.suppress(OSError):  # who holds it, for the next one's message
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


async def import_sources(
    store: Store,
    claude_dir: Path | None = None,
    codex_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    workers: int | None = None,
    search_text: bool = True,
    windows: ContextSettings | None = None,
    list_first_bytes: int | None = None,
) -> ImportReport:
    """Bring the index up to date with the agents' folders; see the module docstring.

    ``search_text=False`` skips full-content search indexing: for the benchmark
    that measures what search adds to an import (tests/bench/bench_search.py).
    ``windows``: the ``[context]`` settings whose ``windows`` extend the model table.
    ``list_first_bytes``: from how many bytes of never-read files every new session
    is listed from its head and tail first (:mod:`core.sources.listing`; None:
    ``LIST_FIRST_BYTES``).
    """
    async with import_lock(store.path.parent):
        return await _import_all(
            store,
            claude_dir,
            codex_dir,
            progress,
            workers=workers,
            search_text=search_text,
            windows=windows,
            list_first_bytes=LIST_FIRST_BYTES if list_first_bytes is None else list_first_bytes,
        )


def find_transcript(source: str, conversation_id: str, root: Path | None) -> str | None:
    """Where an agent CLI keeps this conversation's transcript, by its layout.

    Claude Code: ``projects/<any>/<id>.jsonl``; Codex: ``sessions/<y>/<m>/<d>/
    rollout-<time>-<id>.jsonl``, newest dates first (a fresh run is in today's).
    Only directory listings: nothing is opened. Only an id of the agent's shape
    becomes part of a file name (no ``/``, ``..`` or glob character).
    """
    if not ids.is_valid_id(source, conversation_id):
        return None
    if source == claude.SOURCE:
        projects = discovery.claude_root(root) / "projects"
        for project in _sorted_dirs(projects, newest_first=False):
            candidate = project / f"{conversation_id}.jsonl"
            if candidate.is_file():
                return str(candidate)
        return None
    suffix = f"-{conversation_id}.jsonl"
    return _find_rollout(discovery.codex_root(root) / "sessions", suffix, depth=0)


def _sorted_dirs(path: Path, *, newest_first: bool) -> list[Path]:
    try:
        with os.scandir(path) as it:
            dirs = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(dirs, reverse=newest_first)


def _find_rollout(folder: Path, suffix: str, depth: int) -> str | None:
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                    return entry.path
    except OSError:
        return None
    if depth >= CODEX_DATE_DEPTH:
        return None
    for sub in _sorted_dirs(folder, newest_first=True):
        found = _find_rollout(sub, suffix, depth + 1)
        if found is not None:
            return found
    return None


async def import_transcript(
    store: Store,
    source: str,
    conversation_id: str,
    root: Path | None = None,
    *,
    windows: ContextSettings | None = None,
    wait: bool = True,
) -> bool:
    """Index one conversation's transcript (incrementally), not the whole tree.

    The file is the one the index already knows for the session, else the one
    the agent's layout names under ``root`` (default: the agent's usual
    folder). False when there is none yet (a CLI that failed before writing).
    ``wait=False``: :class:`ImportBusy` when another import holds the lock.
    """
    async with import_lock(store.path.parent, wait=wait):
        known = await store.imports.transcript_for(conversation_id)
        path = known.path if known is not None else None
        if path is None or not os.path.isfile(path):
            path = await asyncio.to_thread(find_transcript, source, conversation_id, root)
        if path is None or not is_utf8_name(path):  # a name no store or terminal can take
            return False
        found = discovery.Discovery()
        try:
            st = os.stat(path)
        except OSError:
            return False
        id_hint = Path(path).stem
        found.files.append(
            discovery.FoundFile(
                path,
                source,
                st.st_size,
                st.st_mtime_ns,
                id_hint if source == claude.SOURCE else id_hint[-36:],
            )
        )
        tasks = _plan(found.files, await store.imports.file_rows([path]))
        run = _Run(store, None, time.perf_counter(), windows)
        await run.commit(await asyncio.to_thread(parse_batch, tasks))
        return True


async def import_files(
    store: Store,
    paths: Iterable[str],
    claude_dir: Path | None = None,
    codex_dir: Path | None = None,
    *,
    windows: ContextSettings | None = None,
) -> int:
    """Index only these changed files (a file watcher's report), incrementally.

    Each path is judged by the walk's own rules (:func:`core.sources.files.classify`):
    not a transcript of the agents' layouts, not a regular file, or resolving
    outside the agent's folder means it is left alone. Reads start at the saved
    offset, dismissed sessions stay dismissed, and the import lock is held as
    for a full import. Returns how many files were read.
    """
    claude_root = discovery.claude_root(claude_dir)
    codex_root = discovery.codex_root(codex_dir)
    async with import_lock(store.path.parent):
        found = discovery.Discovery()
        for path in sorted(set(paths)):
            file = discovery.classify(path, claude_root, codex_root)
            if file is not None:
                found.files.append(file)
        if not found.files:
            return 0
        found.files.sort(key=lambda f: (f.mtime_ns, f.path), reverse=True)
        rows = await store.imports.file_rows([f.path for f in found.files])
        tasks = _plan(found.files, rows)
        run = _Run(store, None, time.perf_counter(), windows)
        for batch in _batches(tasks):
            await run.commit(await asyncio.to_thread(parse_batch, batch))
        return len(tasks)


async def _import_all(
    store: Store,
    claude_dir: Path | None,
    codex_dir: Path | None,
    progress: ProgressCallback | None,
    *,
    workers: int | None,
    search_text: bool = True,
    windows: ContextSettings | None = None,
    list_first_bytes: int = LIST_FIRST_BYTES,
) -> ImportReport:
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    claude_root = discovery.claude_root(claude_dir)
    codex_root = discovery.codex_root(codex_dir)
    # The files with problems (what the report lists when nothing changes) on the
    # store's reader, beside one thread that reads the index's file stats, walks
    # and compares: two waits on the event loop, no work on it.
    early_problems = asyncio.ensure_future(store.imports.file_problems(SKIPS_IN_REPORT))
    try:
        try:
            found, changed_known = await asyncio.to_thread(
                _discover, claude_root, codex_root, store.path
            )
        except sqlite3.Error:  # not openable on its own (read-only mount): ask the store
            stats = await store.imports.file_stat_rows()
            found, changed_known = await asyncio.to_thread(
                _discover, claude_root, codex_root, stats
            )
    except BaseException:
        early_problems.cancel()
        raise
    rows = await store.imports.file_rows(sorted(changed_known)) if changed_known else {}
    tasks = _plan(found.files, rows)
    if not search_text:
        tasks = [replace(t, search_text=False) for t in tasks]
    run = _Run(store, progress, t0, windows)
    run.search_text = search_text
    run.unreadable = [UnreadableFile(path=p, reason=r) for p, r in found.unreadable]
    run.files_total = len(tasks)
    run.bytes_total = sum(max(0, t.size - t.start) for t in tasks)
    run.report("scanning")
    jobs = _listing_jobs(run, tasks, list_first_bytes)
    batches = list(_batches(tasks))
    jobs += [_Job(parse_batch, batch, run.commit) for batch in batches]
    count = _worker_count(workers, run.bytes_total)
    if count == 0 or len(batches) < 2:
        count = 0
        for job in jobs:
            await job.commit(await asyncio.to_thread(job.read, job.tasks))
    else:
        count = await _run_in_pool(jobs, count)
    total, damaged, problems = await early_problems
    if tasks:  # read files may have new problems (or none now)
        total, damaged, problems = await store.imports.file_problems(SKIPS_IN_REPORT)
    report = ImportReport(
        started_at=started,
        duration_s=time.perf_counter() - t0,
        first_batch_s=run.first_batch_s,
        listing_s=run.listing_s,
        roots={"claude-code": str(claude_root), "codex": str(codex_root)},
        workers=count,
        files_seen=found.seen,
        files_skipped_unchanged=found.seen - len(tasks),
        unreadable=run.unreadable,
        skipped=[
            SkippedEntry(path=e.path, kind=e.kind, reason=e.reason)
            for e in found.skipped[:SKIPS_IN_REPORT]
        ],
        entries_skipped=len(found.skipped),
        files_with_skips=[
            FileSkips(
                path=p.path,
                source=p.source,
                malformed_lines=p.malformed,
                unknown_lines=p.unknown,
                oversized_lines=p.oversized,
                error=p.error,
            )
            for p in problems
        ],
        files_with_skips_total=total,
        files_damaged_total=damaged,
        unknown_types=[
            UnknownLineType(source=source, type=kind, version=version, lines=n)
            for (source, kind, version), n in run.unknown_types.most_common(SKIPS_IN_REPORT)
        ],
        **run.counts,
    )
    await store.imports.save_report(int(time.time() * 1_000_000), report.model_dump_json())
    run.report("done")
    return report


@dataclass(frozen=True, slots=True)
class _Job:
    """A batch of files, how they are read (in any process) and how the results land."""

    read: Callable[[list[FileTask]], list[FileResult]]
    tasks: list[FileTask]
    commit: Callable[[list[FileResult]], Awaitable[None]]


def _listing_jobs(run: _Run, tasks: list[FileTask], threshold: int) -> list[_Job]:
    """The listing pass (:mod:`core.sources.listing`) over the files the index has never
    read, when they hold ``threshold`` bytes or more: before any full read."""
    never_read = [t for t in tasks if t.state is None]
    if not never_read or sum(t.size for t in never_read) < threshold:
        return []
    run.files_to_list = len(never_read)
    first = never_read[:FIRST_BATCH_FILES]  # the first rows appear at once
    rest = never_read[FIRST_BATCH_FILES:]
    return [_Job(sketch_batch, first, run.commit_listing)] + [
        _Job(sketch_batch, rest[i : i + LIST_BATCH_FILES], run.commit_listing)
        for i in range(0, len(rest), LIST_BATCH_FILES)
    ]


async def _run_in_pool(jobs: list[_Job], count: int) -> int:
    """The first job runs in a thread while the workers start; the rest in the pool.

    Results are committed in submission order, so rows appear newest first (and
    every listed row before any full read). If the pool breaks (a worker killed,
    or a ``__main__`` without an import guard that the workers cannot load), the
    remaining jobs run in a thread. Returns the number of worker processes that
    did the work (0 after a fallback).
    """
    loop = asyncio.get_running_loop()
    me = os.getpid()
    with _usable_stderr():
        pool = ProcessPoolExecutor(
            count,
            mp_context=_pool_context(),
            # Killed with SIGKILL, this process runs no cleanup: each worker
            # watches it and exits (then the forkserver and tracker follow).
            initializer=start_worker,
            initargs=(me, process_identity.start_time(me)),
        )
    pending: deque[tuple[_Job, asyncio.Future[list[FileResult]]]] = deque()
    rest = deque(jobs[1:])
    broken = False

    def submit() -> None:
        if rest and not broken:
            job = rest.popleft()
            # The first submits start the worker processes.
            with _usable_stderr(), _light_main():
                pending.append((job, loop.run_in_executor(pool, job.read, job.tasks)))

    try:
        try:
            for _ in range(count * 2):
                submit()
        except (BrokenProcessPool, OSError, RuntimeError):
            broken = True
        first = jobs[0]
        await first.commit(await asyncio.to_thread(first.read, first.tasks))
        while pending:
            job, future = pending.popleft()
            try:
                results = await future
                submit()
            except (BrokenProcessPool, OSError, RuntimeError):
                broken = True
                results = await asyncio.to_thread(job.read, job.tasks)
            await job.commit(results)
        for job in rest:
            await job.commit(await asyncio.to_thread(job.read, job.tasks))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return 0 if broken else count


def load_report(text: str | None) -> ImportReport | None:
    return ImportReport.model_validate_json(text) if text else None
