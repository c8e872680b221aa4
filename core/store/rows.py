"""What goes into the store and how a stored row becomes a model.

Rows are read by column name (``aiosqlite.Row``), never by position. Reading
never fails on what another program (or a newer delegate) stored: out-of-range
timestamps and numbers are clamped, unknown enum values fall back to a safe
one (see :func:`clamp_int`, :func:`clamp_time`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

import aiosqlite

from core.models import (
    ContextUsage,
    Message,
    MessageCategory,
    Role,
    Run,
    RunKind,
    RunStatus,
    Session,
    SessionMetrics,
    SessionMode,
    SessionState,
    Usage,
    WindowSource,
)
from core.process_identity import ProcessIdentity
from core.sources.common import SessionFacts

E = TypeVar("E", bound=StrEnum)
R = TypeVar("R")

# --- writes ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """The agent's transcript a session is read from (not delegate's ``messages``).

    ``prompts_in_items``: a Codex rollout that logs prompts only as response items
    (``codex exec``), known from the importer's running totals.
    """

    path: str
    source: str
    prompts_in_items: bool


@dataclass(frozen=True, slots=True)
class NewSession:
    """What a launch records about a session before its first run starts."""

    conversation_id: str
    agent_id: str
    mode: SessionMode
    cwd: str
    title: str
    created_us: int
    context_limit: int
    git_branch: str | None = None
    parent_id: str | None = None
    source: str = "delegate"
    warmup: bool = False  # a Claude Code warm-up sub-agent (hidden by default)
    model: str | None = None  # the agent's configured model, when it names one
    window_source: WindowSource = WindowSource.UNKNOWN  # where ``context_limit`` came from
    clamped_from: int | None = None  # the parent's window, when this one was cut below it
    forked_from: str | None = None  # the session a checkpoint fork copied
    capsule_id: str | None = None  # the capsule its first prompt carried (registry id)
    capsule_digest: str | None = None  # the digest of the capsule body injected


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message about to be appended; ``token_count`` is computed once, by the caller."""

    id: str
    role: Role
    content: str
    created_us: int
    token_count: int
    tool: dict[str, Any] | None = None
    run_id: str | None = None
    # None: from the role (system -> system, a tool call or result -> tools, else dialog).
    category: MessageCategory | None = None

    @property
    def stored_category(self) -> MessageCategory:
        if self.category is not None:
            return self.category
        if self.role is Role.SYSTEM:
            return MessageCategory.SYSTEM
        if self.tool is not None or self.role is Role.TOOL:
            return MessageCategory.TOOLS
        return MessageCategory.DIALOG

    @property
    def size_bytes(self) -> int:
        tool = json.dumps(self.tool) if self.tool else ""
        return len(self.content.encode("utf-8", "surrogatepass")) + len(tool.encode())


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run about to start: a launch or a follow-up, owned by this process unless
    ``owner`` names another (the worker process of a detached run)."""

    run_id: str
    agent_id: str
    kind: RunKind
    prompt: str
    started_us: int
    owner: ProcessIdentity | None = None
    owner_kind: str = "other"  # see core.models.OwnerKind
    capsule_id: str | None = None  # the capsule its prompt carried (a launch's first run)
    capsule_digest: str | None = None


@dataclass(frozen=True, slots=True)
class FinishedSession:
    """A whole session to insert at once (demo data, benchmarks)."""

    session: NewSession
    messages: Sequence[NewMessage]
    last_interacted_us: int
    state: SessionState
    last_run_status: RunStatus | None = RunStatus.COMPLETED
    # What the agent reported its context holds; None counts the messages' tokens.
    context_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """A stored history event: the payload is the event's own JSON."""

    id: int
    at: int
    kind: str
    conversation_id: str | None
    run_id: str | None
    payload: dict[str, Any]


# --- imports -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceFileRow:
    """Where the last read of a transcript file stopped, and what it had seen."""

    path: str
    size: int
    offset: int
    head_len: int
    head_hash: str
    state: dict[str, Any]
    counts: tuple[int, int, int]  # malformed, unknown, oversized lines


@dataclass(frozen=True, slots=True)
class ImportedSession(SessionFacts):
    """A session as the import stores it: what its transcript said (the parsers'
    :class:`~core.sources.common.SessionFacts`), its file's size and its window's origin."""

    bytes: int = 0
    window_source: WindowSource = WindowSource.UNKNOWN  # where ``context_limit`` came from
    counting: bool = False  # listed from the file's head and tail: counts come later

    @classmethod
    def of(cls, facts: SessionFacts, **changes: Any) -> ImportedSession:
        """``facts`` as they are, but for ``changes`` (and this class's own fields)."""
        known = {name: getattr(facts, name) for name in _FACT_NAMES}
        return cls(**(known | changes))


_FACT_NAMES = tuple(f.name for f in fields(SessionFacts))


@dataclass(frozen=True, slots=True)
class SourceFileUpdate:
    """A transcript file just read (or that failed to read), and its session's facts."""

    path: str
    source: str
    size: int
    mtime_ns: int
    offset: int = 0
    head_len: int = 0
    head_hash: str = ""
    state_json: str = "{}"
    malformed: int = 0
    unknown: int = 0
    oversized: int = 0
    error: str | None = None
    facts: ImportedSession | None = None
    write_session: bool = True  # False when a newer file of the same id already did


@dataclass
class ImportCommit:
    """What one :meth:`ImportsRepository.apply` batch changed."""

    added: int = 0
    updated: int = 0
    skipped_dismissed: int = 0
    skipped_busy: int = 0
    added_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SourceFileProblem:
    """A transcript file with skipped lines or a read error."""

    path: str
    source: str
    malformed: int
    unknown: int
    oversized: int
    error: str | None


# --- reading: never fails on what is stored -------------------------------------

# SQLite integers are signed 64-bit; anything else stored in an INTEGER column
# (a REAL beyond that, text) is clamped into this range.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
# One day inside datetime's range, so converting to any local time zone
# (offsets up to ±26 h) stays representable.
_EARLIEST = datetime.min.replace(tzinfo=UTC) + timedelta(days=2)
_LATEST = datetime.max.replace(tzinfo=UTC) - timedelta(days=2)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EARLIEST_US = (_EARLIEST - _EPOCH) // timedelta(microseconds=1)
LATEST_US = (_LATEST - _EPOCH) // timedelta(microseconds=1)


def split_page(rows: Sequence[R], limit: int) -> tuple[Sequence[R], R | None]:
    """Rows read with ``LIMIT limit + 1``: the page's rows, and its last row when more
    follow (the next page's cursor starts after it; None on the last page).

    Every keyset-paged reader (sessions, sub-agents, messages, search) reads one row
    more than it shows, so "more follow" costs no count.
    """
    page = rows[:limit]
    return page, (page[-1] if len(rows) > limit and page else None)


def clamp_int(value: object, low: int = INT_MIN, high: int = INT_MAX) -> int:
    """A stored number as an int in ``[low, high]``; anything unreadable is 0 (or ``low``)."""
    if type(value) is int and low <= value <= high:
        return value  # what nearly every row holds (a row is read in about 20 calls)
    number: int
    if isinstance(value, bool):
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if value != value:  # NaN
            number = 0
        elif value in (float("inf"), float("-inf")):
            number = high if value > 0 else low
        else:
            number = int(value)
    elif isinstance(value, str | bytes):
        try:
            number = int(float(value))
        except (ValueError, OverflowError):
            number = 0
    else:
        number = 0
    return max(low, min(high, number))


def clamp_count(value: object) -> int:
    """A stored count, size or token number: never negative."""
    return clamp_int(value, 0)


def clamp_time(value: object) -> datetime:
    """Stored microseconds since the epoch as an aware datetime, clamped into range."""
    us = clamp_int(value, EARLIEST_US, LATEST_US)
    return _EPOCH + timedelta(microseconds=us)


def _enum(kind: type[E], value: object, fallback: E) -> E:
    try:
        return kind(str(value))
    except ValueError:  # written by a newer delegate
        return fallback


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _json_dict(value: object) -> dict[str, Any] | None:
    if not value:
        return None
    try:
        data = json.loads(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


SESSION_COLUMNS = (
    "conversation_id, agent_id, mode, state, cwd, git_branch, title, parent_id, source,"
    " created_at, last_interacted_at, turns, message_count, token_count, bytes_on_disk,"
    " context_tokens, context_limit, last_run_status, name, archived_at, warmup,"
    " context_known, context_estimated, model, window_source, clamped_from, tokens_per_turn,"
    " continued_from, continued_in, forked_from, capsule_id, capsule_digest, counting"
)
# A session's sub-agents as its row shows them (warm-ups are not counted):
# one range of index ``sessions_children`` per row. ``{table}`` is the name or
# alias of the outer ``sessions`` table.
_CHILD_COUNT = (
    "(SELECT count(*) FROM sessions AS child WHERE child.parent_id = {table}.conversation_id"
    " AND child.warmup = 0) AS child_count"
)


def session_columns(table: str = "sessions") -> str:
    """The columns :func:`session_from_row` reads, with ``child_count``, for ``table``."""
    columns = ", ".join(f"{table}.{c.strip()}" for c in SESSION_COLUMNS.split(","))
    return f"{columns}, {_CHILD_COUNT.format(table=table)}"


MESSAGE_COLUMNS = (
    "id, conversation_id, seq, role, content, created_at, token_count, tool, run_id, category"
)
RUN_COLUMNS = (
    "run_id, conversation_id, agent_id, kind, prompt, status, started_at, finished_at,"
    " input_tokens, output_tokens, output, error, stderr, heartbeat_at, cancel_requested_at,"
    " live_output, stderr_tail, last_output_at, owner_kind, owner_host, owner_pid,"
    " capsule_id, capsule_digest"
)


def session_from_row(row: aiosqlite.Row) -> Session:
    """A stored session; ``child_count`` is 0 unless the query selected it
    (:func:`session_columns`)."""
    status = row["last_run_status"]
    archived = row["archived_at"]
    return Session(
        conversation_id=_text(row["conversation_id"]),
        agent_id=_text(row["agent_id"]),
        mode=_enum(SessionMode, row["mode"], SessionMode.STANDARD),
        state=_enum(SessionState, row["state"], SessionState.IDLE),
        cwd=_text(row["cwd"]),
        git_branch=_optional_text(row["git_branch"]),
        title=_text(row["title"]),
        parent_id=_optional_text(row["parent_id"]),
        source=_text(row["source"]),
        created_at=clamp_time(row["created_at"]),
        last_interacted_at=clamp_time(row["last_interacted_at"]),
        metrics=SessionMetrics(
            turns=clamp_count(row["turns"]),
            messages=clamp_count(row["message_count"]),
            tokens=clamp_count(row["token_count"]),
            bytes=clamp_count(row["bytes_on_disk"]),
        ),
        context=ContextUsage(
            used_tokens=clamp_count(row["context_tokens"]),
            limit_tokens=clamp_count(row["context_limit"]),
            known=bool(row["context_known"]),
            estimated=bool(row["context_estimated"]),
            model=_optional_text(row["model"]) or None,
            window_source=_enum(WindowSource, row["window_source"], WindowSource.UNKNOWN),
            clamped_from=_optional_count(row["clamped_from"]),
            tokens_per_turn=clamp_count(row["tokens_per_turn"]),
        ),
        last_run_status=_enum(RunStatus, status, RunStatus.FAILED) if status else None,
        name=_optional_text(row["name"]) or None,
        archived_at=clamp_time(archived) if archived is not None else None,
        child_count=_child_count(row),
        warmup=bool(clamp_int(row["warmup"])),
        counting=bool(clamp_int(row["counting"])),
        continued_from=_optional_text(row["continued_from"]) or None,
        continued_in=_optional_text(row["continued_in"]) or None,
        forked_from=_optional_text(row["forked_from"]) or None,
        capsule_id=_optional_text(row["capsule_id"]) or None,
        capsule_digest=_optional_text(row["capsule_digest"]) or None,
    )


def _optional_count(value: object) -> int | None:
    return None if value is None else clamp_count(value)


def _child_count(row: aiosqlite.Row) -> int:
    # ``in`` on a row tests its values, not its column names.
    if "child_count" not in row.keys():  # noqa: SIM118
        return 0
    return clamp_count(row["child_count"])


def message_from_row(row: aiosqlite.Row) -> Message:
    return Message(
        id=_text(row["id"]),
        conversation_id=_text(row["conversation_id"]),
        seq=clamp_int(row["seq"]),
        role=_enum(Role, row["role"], Role.SYSTEM),
        content=_text(row["content"]),
        created_at=clamp_time(row["created_at"]),
        token_count=clamp_count(row["token_count"]),
        tool=_json_dict(row["tool"]),
        run_id=_optional_text(row["run_id"]),
        category=_enum(MessageCategory, row["category"], MessageCategory.DIALOG),
    )


def run_from_row(row: aiosqlite.Row) -> Run:
    finished = row["finished_at"]
    return Run(
        run_id=_text(row["run_id"]),
        conversation_id=_text(row["conversation_id"]),
        agent_id=_text(row["agent_id"]),
        kind=_enum(RunKind, row["kind"], RunKind.FOLLOW_UP),
        prompt=_text(row["prompt"]),
        status=_enum(RunStatus, row["status"], RunStatus.FAILED),
        started_at=clamp_time(row["started_at"]),
        finished_at=clamp_time(finished) if finished is not None else None,
        usage=Usage(
            input_tokens=clamp_count(row["input_tokens"]),
            output_tokens=clamp_count(row["output_tokens"]),
        ),
        output=_text(row["output"]),
        error=_optional_text(row["error"]),
        stderr=_optional_text(row["stderr"]),
        heartbeat_at=_optional_time(row["heartbeat_at"]),
        cancel_requested=row["cancel_requested_at"] is not None,
        live_output=_optional_text(row["live_output"]),
        stderr_tail=_optional_text(row["stderr_tail"]),
        last_output_at=_optional_time(row["last_output_at"]),
        owner_kind=_text(row["owner_kind"]) or "other",
        capsule_id=_optional_text(row["capsule_id"]) or None,
        capsule_digest=_optional_text(row["capsule_digest"]) or None,
        owner_host=_optional_text(row["owner_host"]),
        owner_pid=row["owner_pid"] if isinstance(row["owner_pid"], int) else None,
    )


def ready_state(mode: SessionMode, status: RunStatus) -> SessionState:
    """Where a session rests after a run that ended ``status``.

    A detached session is Ready once a run of it completed; one that failed,
    was cancelled or lost its process rests ``idle`` with ``last_run_status``
    saying why, never Ready: the user retries (a follow-up) or dismisses it.
    """
    if mode is SessionMode.DETACHED and status is RunStatus.COMPLETED:
        return SessionState.READY
    return SessionState.IDLE


def _optional_time(value: object) -> datetime | None:
    return clamp_time(value) if value is not None else None
