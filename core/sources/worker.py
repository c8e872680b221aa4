"""Parse one transcript file from a byte offset: the unit of work of an import.

Runs in worker processes, so it imports only the stdlib, orjson and the
format modules, and takes and returns plain picklable dataclasses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from core import ids, process_identity
from core.sources import claude, codex
from core.sources.common import SessionFacts
from core.sources.lines import BOM, BadLine, ForwardLines, loads
from core.sources.safe_files import open_regular, read_regular
from core.sources.texts import Searchable, extractor

HEAD_BYTES = 4096
"""A file whose first (up to) 4 KiB changed was rewritten, not appended to."""
PARENT_POLL_S = 0.25


@dataclass(frozen=True, slots=True)
class FileTask:
    path: str
    source: str
    size: int
    mtime_ns: int
    id_hint: str
    subagent: bool = False
    parent_hint: str | None = None
    meta_path: str | None = None
    start: int = 0
    head_len: int = 0
    head_hash: str = ""
    state: dict[str, Any] | None = None
    counts: tuple[int, int, int] = (0, 0, 0)  # malformed, unknown, oversized so far
    reread: bool = False  # a known file that shrank: read again from 0
    search_text: bool = True  # extract prompts and replies for full-content search


@dataclass(slots=True)
class FileResult:
    path: str
    source: str
    size: int
    mtime_ns: int
    offset: int = 0
    head_len: int = 0
    head_hash: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    malformed: int = 0  # cumulative for the file, like the two below
    unknown: int = 0
    oversized: int = 0
    new_malformed: int = 0  # found by this read
    new_unknown: int = 0
    # (line type, agent version) -> lines of it found by this read, for the report
    unknown_types: dict[tuple[str, str], int] = field(default_factory=dict)
    new_oversized: int = 0
    new_odd_timestamps: int = 0  # unreadable or out of range: ignored
    bytes_read: int = 0
    head_bytes_read: int = 0
    restarted: bool = False
    error: str | None = None
    facts: SessionFacts | None = None
    invalid_id: str | None = None  # the session's id, when it is not its agent's shape
    from_start: bool = False  # read from offset 0: ``texts`` replace what was indexed before
    texts: list[Searchable] = field(default_factory=list)  # for search, this read's


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _description(meta_path: str | None) -> str | None:
    if meta_path is None:
        return None
    try:
        meta = loads(read_regular(meta_path, 64 * 1024))
    except (OSError, BadLine):  # gone, not a regular file, not JSON: no description
        return None
    text = meta.get("description") if isinstance(meta, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def start_state(task: FileTask, *, fresh: bool) -> claude.ClaudeState | codex.CodexState:
    saved = {} if fresh or task.state is None else task.state
    if task.source == claude.SOURCE:
        if fresh:
            return claude.ClaudeState(sidechain_file=task.subagent)
        return claude.ClaudeState.from_json(saved)
    return codex.CodexState.from_json(saved)


TYPE_NAME_CHARS = 80


def _unknown_kind(
    line: dict[str, Any], state: claude.ClaudeState | codex.CodexState
) -> tuple[str, str] | None:
    """``(type, version)`` of a line no importer knows, or None when it names no type
    at all (damage, not a new kind of line). The agent's version says which release
    writes it (a line's own ``version`` for Claude Code, the rollout's for Codex); a
    Codex ``event_msg`` or ``response_item`` is named with its payload's type."""
    kind = line.get("type")
    if not isinstance(kind, str) or not kind:
        return None
    if isinstance(state, codex.CodexState) and kind in codex.KNOWN_TYPES:
        payload = line.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        if not isinstance(sub, str) or not sub:
            return None
        kind = f"{kind}/{sub}"
    version = line.get("version")
    if not isinstance(version, str):
        version = (
            state.version if isinstance(state, claude.ClaudeState) else state.cli_version
        ) or ""
    return kind[:TYPE_NAME_CHARS], version[:TYPE_NAME_CHARS]


def _no_text(line: dict[str, Any]) -> None:
    return None


def parse_file(task: FileTask) -> FileResult:
    """Read ``task.path`` from ``task.start`` (or from 0 when it was rewritten)."""
    result = FileResult(task.path, task.source, task.size, task.mtime_ns)
    try:
        with open_regular(task.path) as f:
            restart = task.start == 0 or task.state is None
            if not restart:
                head = f.read(task.head_len)
                result.head_bytes_read += len(head)
                restart = len(head) < task.head_len or _digest(head) != task.head_hash
            result.restarted = task.reread or (restart and task.state is not None)
            state = start_state(task, fresh=restart)
            odd_before = state.odd_timestamps
            malformed, unknown, oversized = (0, 0, 0) if restart else task.counts
            result.from_start = restart
            searchable = extractor(task.source) if task.search_text else _no_text
            found = result.texts
            reader = ForwardLines(f, 0 if restart else task.start)
            for _offset, raw in reader:
                if raw is None:
                    result.new_oversized += 1
                    continue
                if not raw or raw.isspace():  # no copy of the line, unlike strip()
                    continue
                try:
                    # ``lines.loads`` inlined (the hot loop): BOM dropped, objects only.
                    line = orjson.loads(raw[len(BOM) :] if raw.startswith(BOM) else raw)
                    if type(line) is not dict:
                        result.new_malformed += 1
                        continue
                    known = state.feed(line)
                    if (text := searchable(line)) is not None:
                        found.append(text)
                except Exception:  # bad JSON, or a shape we did not foresee: never stops it
                    result.new_malformed += 1
                    continue
                if not known:
                    if (kind := _unknown_kind(line, state)) is None:
                        result.new_malformed += 1  # a known shape broken, not a new type
                        continue
                    result.new_unknown += 1
                    result.unknown_types[kind] = result.unknown_types.get(kind, 0) + 1
            result.offset = reader.end
            result.bytes_read = reader.bytes_read
            result.head_len = min(HEAD_BYTES, reader.end)
            f.seek(0)
            head = f.read(result.head_len)
            result.head_bytes_read += len(head)
            result.head_hash = _digest(head)
    except OSError as exc:
        result.error = exc.strerror or str(exc)
        return result
    result.malformed = malformed + result.new_malformed
    result.unknown = unknown + result.new_unknown
    result.oversized = oversized + result.new_oversized
    result.new_odd_timestamps = state.odd_timestamps - odd_before
    result.state = state.to_json()
    result.facts = session_facts(task, state)
    drop_invalid_ids(result)
    return result


def session_facts(
    task: FileTask, state: claude.ClaudeState | codex.CodexState
) -> SessionFacts | None:
    """The session a file's parse state describes (None: no conversation in it)."""
    if isinstance(state, claude.ClaudeState):
        if task.subagent:
            cid = state.agent_id or task.id_hint
            parent = state.session_id or task.parent_hint
            return state.facts(cid, parent, _description(task.meta_path))
        return state.facts(task.id_hint, None, None)
    return state.facts(task.id_hint)


def drop_invalid_ids(result: FileResult) -> None:
    """A session whose id its agent would never mint is not imported (docs/security.md)."""
    facts = result.facts
    if facts is None:
        return
    if not ids.is_valid_id(facts.source, facts.conversation_id):
        result.invalid_id, result.facts = facts.conversation_id, None
    elif facts.parent_id is not None and not ids.is_valid_id(facts.source, facts.parent_id):
        result.facts = dataclasses.replace(facts, parent_id=None)


def read_or_fail(read: Callable[[FileTask], FileResult], task: FileTask) -> FileResult:
    """One file's result; a failure we did not foresee marks that file alone unreadable."""
    try:
        return read(task)
    except Exception as exc:
        failed = FileResult(task.path, task.source, task.size, task.mtime_ns)
        failed.error = f"could not be parsed: {type(exc).__name__}: {exc}"[:500]
        return failed


def parse_batch(tasks: list[FileTask]) -> list[FileResult]:
    """Entry point of a worker process: one result per task, in order."""
    return [read_or_fail(parse_file, t) for t in tasks]


# --- a worker never outlives the import that started it --------------------


def start_worker(pid: int, started: int | None) -> None:
    """Pool initializer: the importer (process ``pid``) alone decides when work stops.

    A terminal's Ctrl+C reaches the whole process group, workers included: a
    worker interrupted mid-batch would hand its traceback to the importer as the
    batch's result, printed on the person's screen. So workers ignore SIGINT;
    the importer stops on it, and each worker ends as soon as the importer is
    gone. The worker's own parent is the forkserver, which stays up as long as
    any worker does: so each worker watches the importing process itself, by pid
    and start time (a reused pid is another process).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(pid, started), name="watch-parent", daemon=True).start()


def _watch(pid: int, started: int | None) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if process_identity.liveness(None, process_identity.host_id(), pid, started) != "alive":
            os._exit(1)  # the importer is gone: nothing will read our results
