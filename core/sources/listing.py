"""A session's row from its transcript's head and tail: the listing pass of a cold import.

A row needs what a transcript says first (its id, folder, branch, first prompt and
start) and last (its last activity, model and the context's last usage). Reading
those lines only costs a small fraction of reading every line (docs/benchmarks.md,
"Speed"), so a cold import lists every new session this way before it
reads each file in full for its turn counts, token totals and search texts.

Nothing here is kept as a file's read position: the full read starts from 0.
"""

from __future__ import annotations

import dataclasses

import orjson

from core.sources import claude, codex
from core.sources.common import clamp_us
from core.sources.lines import BOM
from core.sources.safe_files import open_regular
from core.sources.worker import (
    FileResult,
    FileTask,
    drop_invalid_ids,
    read_or_fail,
    session_facts,
    start_state,
)

STEP_BYTES = 16 * 1024
"""Both ends are read in steps of this: most rows need no more than one of each."""
HEAD_MAX_BYTES = 128 * 1024
"""The head grows until the first prompt is read or this is: a Codex rollout opens
with its instructions and injected context, often over 16 KiB, before any prompt."""
TAIL_MAX_BYTES = 64 * 1024
"""The tail grows until it holds a whole line or this is (never before the head's end)."""


def sketch_file(task: FileTask) -> FileResult:
    """The facts of ``task``'s head and tail lines, as :func:`worker.parse_file` gives
    them for a whole file: exact ids, folder, branch, title, times, model and context;
    turn counts and token totals only of the lines read.

    Reads of bounded size, whatever the lines: a line that does not end within its
    window, or is not a JSON object, is passed over (the full read counts it). When
    the tail holds no whole line (one long last line), the session's last activity
    is the file's last write.
    """
    result = FileResult(task.path, task.source, task.size, task.mtime_ns, from_start=True)
    state = start_state(task, fresh=True)
    try:
        with open_regular(task.path) as f:
            head = b""
            covered = 0  # the head's whole lines end here; the tail starts no earlier
            while len(head) < HEAD_MAX_BYTES and not _prompted(state):
                step = f.read(STEP_BYTES)
                if not step:
                    break
                head += step
                while (nl := head.find(b"\n", covered)) >= 0:
                    _feed(state, head[covered:nl])
                    covered = nl + 1
            size = f.seek(0, 2)
            tail_at, tail = size, b""
            while tail_at > covered and size - tail_at < TAIL_MAX_BYTES and tail.count(b"\n") < 2:
                tail_at = max(covered, tail_at - STEP_BYTES)
                f.seek(tail_at)
                tail = f.read(size - tail_at)
            result.bytes_read = len(head) + len(tail)
    except OSError as exc:
        result.error = exc.strerror or str(exc)
        return result
    # A window that does not start where a line does begins mid-line; whatever
    # follows the last newline is a line still being written.
    if tail_at == covered:
        first = 0
    else:
        nl = tail.find(b"\n")
        first = nl + 1 if nl >= 0 else len(tail)
    last = tail.rfind(b"\n")
    whole_lines = tail[first:last].split(b"\n") if last >= first else []
    for raw in whole_lines:
        _feed(state, raw)
    result.state = state.to_json()
    result.facts = session_facts(task, state)
    if result.facts is not None and tail_at > covered and not whole_lines:
        result.facts = dataclasses.replace(result.facts, last_us=clamp_us(task.mtime_ns // 1000))
    drop_invalid_ids(result)
    return result


def _prompted(state: claude.ClaudeState | codex.CodexState) -> bool:
    """Whether the head has reached the first prompt (the row's title and start)."""
    return state.turns > 0 or (isinstance(state, codex.CodexState) and state.item_turns > 0)


def _feed(state: claude.ClaudeState | codex.CodexState, raw: bytes) -> None:
    if not raw or raw.isspace():
        return
    try:
        line = orjson.loads(raw[len(BOM) :] if raw.startswith(BOM) else raw)
        if type(line) is dict:
            state.feed(line)
    except Exception:  # bad JSON or an unforeseen shape: the full read counts it
        return


def sketch_batch(tasks: list[FileTask]) -> list[FileResult]:
    """One result per task, in order (a worker's entry point, as ``parse_batch`` is)."""
    return [read_or_fail(sketch_file, t) for t in tasks]
