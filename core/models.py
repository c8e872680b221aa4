"""Pydantic models shared by the store, the orchestrator and every front end.

Request models forbid unknown fields so a typo in a tool call is reported
(``invalid_request`` naming the field) instead of silently ignored.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import
# annotations`): pydantic would otherwise evaluate each string itself, which costs
# about twice as much, and these classes are made before the panel's first frame.

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    model_validator,
)

MAX_PAGE = 100
DEFAULT_SESSION_PAGE = 3
DEFAULT_MESSAGE_PAGE = 10
DEFAULT_SEARCH_PAGE = 20


class SessionMode(StrEnum):
    """How a delegate was launched: attached to its caller, or detached."""

    STANDARD = "standard"
    DETACHED = "detached"


class SessionState(StrEnum):
    """Where a session is in its life; only ``dismiss`` removes one."""

    IDLE = "idle"  # reusable, nothing running
    RUNNING = "running"  # a launch or follow-up is in flight
    PENDING = "pending"  # detached launch still working
    READY = "ready"  # detached launch finished, waiting for a follow-up
    HANDED_OFF = "handed_off"  # context ran low and work moved on (later issues)


class RunKind(StrEnum):
    LAUNCH = "launch"
    FOLLOW_UP = "follow_up"


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # its owner died or stopped beating before it finished


# Who drives a run: a one-run process (``delegate run``, a detached worker) may
# be signalled to stop it; a panel, the MCP server or ``delegate watch`` drive
# other runs too and are only ever asked through the cancel flag.
OwnerKind = Literal["run", "worker", "panel", "mcp", "watch", "other"]
ONE_RUN_OWNERS: frozenset[str] = frozenset({"run", "worker"})


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Usage(Strict):
    """Token usage a runner reported for one run."""

    input_tokens: int = 0
    output_tokens: int = 0


class SessionMetrics(Strict):
    """Shadow metrics of a session: what it weighs and how far it went."""

    turns: int = 0
    messages: int = 0
    tokens: int = 0
    bytes: int = 0


class ContextLevel(StrEnum):
    """The context thresholds, lowest first (``[context]`` in the settings sets each %)."""

    OK = "ok"
    NOTIFY = "notify"  # 50%: a warning and a coloured meter
    REMINDER = "reminder"  # 60%: a reminder that a hand-off is coming
    HANDOFF = "handoff"  # 70%: a hand-off document is written, work continues elsewhere
    FORCE = "force"  # 90%: delegate sends no further prompt to the session


class WindowSource(StrEnum):
    """Where a session's context window (``limit_tokens``) came from."""

    UNKNOWN = ""
    MODEL = "model"  # the table of model families (core.context.windows)
    RECORDED = "recorded"  # the agent recorded it (Codex's model_context_window)
    CONFIG = "config"  # the agent's ``context_limit`` setting
    CLAMP = "clamp"  # cut to the child's model limit, below its parent's window


class ContextUsage(Strict):
    """How much of an agent's context window the session occupies."""

    used_tokens: int = 0
    limit_tokens: int = 0
    # False when the agent recorded no usage at all: shown as "usage unknown", never "0 used".
    known: bool = True
    # True right after a compaction boundary, before the agent records new usage:
    # ``used_tokens`` is then an estimate (shown with "≈"), not a measured figure.
    estimated: bool = False
    model: str | None = None  # the model the session last ran on, when known
    window_source: WindowSource = WindowSource.UNKNOWN
    # Set when the window was clamped below the parent's: the parent's window.
    clamped_from: int | None = None
    # Recent average growth of the context per turn (kept with the session).
    tokens_per_turn: int = 0

    @property
    def left_fraction(self) -> float:
        if self.limit_tokens <= 0:
            return 1.0
        return max(0.0, 1.0 - self.used_tokens / self.limit_tokens)

    @property
    def percent(self) -> float:
        """Per cent of the window in use (0 when the window is unknown)."""
        if self.limit_tokens <= 0:
            return 0.0
        return 100.0 * self.used_tokens / self.limit_tokens

    @property
    def turns_left(self) -> int | None:
        """Turns left at the recent rate; None while there is no rate yet."""
        if self.tokens_per_turn <= 0 or self.limit_tokens <= 0:
            return None
        return max(0, (self.limit_tokens - self.used_tokens) // self.tokens_per_turn)


class Session(Strict):
    """One reusable delegate conversation, as listed by ``delegate_sessions``."""

    conversation_id: str
    agent_id: str
    mode: SessionMode
    state: SessionState
    cwd: str
    git_branch: str | None = None
    title: str = ""
    parent_id: str | None = None
    source: str = "delegate"
    created_at: datetime
    last_interacted_at: datetime
    metrics: SessionMetrics = Field(default_factory=SessionMetrics)
    context: ContextUsage = Field(default_factory=ContextUsage)
    last_run_status: RunStatus | None = None
    # A name the user gave it in delegate (never written into another tool's files).
    name: str | None = None
    # Set while the session is in the archive (dismissed: out of the reusable pool).
    archived_at: datetime | None = None
    # How many sub-agent sessions have this one as their parent (listed under it).
    child_count: int = 0
    # A Claude Code warm-up sub-agent (a lone "Warmup" prompt), hidden by default.
    warmup: bool = False
    # Listed from its transcript's head and tail by an import still reading the file in
    # full: ``metrics`` count only those lines until then (docs/import.md).
    counting: bool = False
    # The hand-off chain: the session this one continues, and the one continuing it.
    continued_from: str | None = None
    continued_in: str | None = None
    forked_from: str | None = None  # the session a checkpoint fork started from
    # The capsule its first prompt carried (registry id, digest of the body injected).
    capsule_id: str | None = None
    capsule_digest: str | None = None

    @property
    def shown_title(self) -> str:
        """What every view shows as the session's title: its name, else its first prompt."""
        return self.name or self.title


class SessionSort(StrEnum):
    """The order of a listing: newest activity first, or newest created first."""

    ACTIVITY = "activity"
    CREATED = "created"


class SessionScope(Strict):
    """Which sessions a listing, a count or a search covers, and in what order.

    The default is what the seed's ``list`` returns: every project, the
    reusable pool (not the archive), sub-agents only under their parents,
    newest activity first.
    """

    # Sessions whose cwd is one of these folders or inside one (a project and
    # its worktrees); None covers every project.
    roots: tuple[str, ...] | None = None
    branch: str | None = None  # only sessions on this git branch
    archived: bool = False  # the archive instead of the reusable pool
    sort: SessionSort = SessionSort.ACTIVITY
    # True lists top-level sessions only (sub-agents are read with their parent);
    # False lists sub-agents as rows of their own.
    top_level: bool = True
    subagents: bool = True  # False hides sub-agent sessions entirely
    warmup: bool = False  # True shows Claude Code's warm-up sub-agents too


class MessageCategory(StrEnum):
    """What a message is for (seed 004): only SYSTEM and CONTEXT are shared with a child."""

    SYSTEM = "system"  # instructions: system prompts, notes delegate records
    CONTEXT = "context"  # material given to work with: injected documents, shared context
    DIALOG = "dialog"  # the conversation: prompts and replies
    TOOLS = "tools"  # tool calls and their results


class Message(Strict):
    """One message of a conversation; ``tool`` carries call metadata for replay."""

    id: str
    conversation_id: str
    seq: int
    role: Role
    content: str
    created_at: datetime
    token_count: int = 0
    tool: dict[str, Any] | None = None
    run_id: str | None = None
    category: MessageCategory = MessageCategory.DIALOG


class Checkpoint(Strict):
    """A mark in a session at one message, to restore to or fork from."""

    checkpoint_id: str
    conversation_id: str
    seq: int  # the message it marks (stored seq; for an imported transcript, its index)
    label: str = ""
    created_at: datetime


class DocumentKind(StrEnum):
    CAPSULE = "capsule"  # seed 000
    HANDOFF = "handoff"  # seed 003
    RETURN = "return"  # seed 002


class DocumentStatus(StrEnum):
    DRAFT = "draft"
    FINAL = "final"
    PENDING = "pending"  # written, waiting for a person to continue it (HANDOFF_PENDING.md)
    CONSUMED = "consumed"  # a session was started from it
    ARCHIVED = "archived"  # its chain finished: moved to the archive folder
    STALE = "stale"  # files it references changed since it was written (capsules)


class ContextDocument(Strict):
    """One registered context document (a file in a repository's ``.delegate/``)."""

    document_id: str
    kind: DocumentKind
    path: str
    digest: str = ""
    source_session: str | None = None
    run_id: str | None = None
    previous_id: str | None = None  # the chain: the document this one follows
    status: DocumentStatus = DocumentStatus.FINAL
    producer: str = ""  # agent | facts | person
    token_estimate: int = 0
    created_at: datetime
    consumers: tuple[str, ...] = ()


class HandoffResult(StrEnum):
    """How one hand-off ended (seed 003 §4 and edge cases 1-2); see :class:`HandoffOutcome`."""

    CONTINUED = "continued"  # written; the work continues in ``successor_id``
    PENDING = "pending"  # written; a person continues it (HANDOFF_PENDING.md beside it)
    WRITE_FAILED = "write_failed"  # nothing written: the session keeps working, refused at force
    SPAWN_FAILED = "spawn_failed"  # written, the new session did not start: pending, as above
    ALREADY = "already"  # handed off before: nothing new, the work is in ``successor_id``
    NOT_DONE = "not_done"  # nothing attempted (one under way, the session unknown)


class HandoffOutcome(Strict):
    """What one hand-off did: the one answer every front end renders.

    ``document``: the hand-off written (None when nothing was); ``folder``: the
    repository it was written under, or tried; ``successor_id``: the session the
    work continues in; ``pending_note``: the ``HANDOFF_PENDING.md`` that tells a
    person how to continue it; ``failure``: what went wrong, in words;
    ``force_percent``: after a failed write, the level past which delegate sends
    the session nothing more (until then it keeps working and is asked again);
    ``elsewhere``: why ``folder`` is under delegate's data folder instead of the
    session's own (its folder is not one delegate writes in), None when it is not.
    """

    conversation_id: str
    result: HandoffResult
    document: ContextDocument | None = None
    folder: str | None = None
    successor_id: str | None = None
    pending_note: str | None = None
    failure: str | None = None
    force_percent: int | None = None
    elsewhere: str | None = None  # why it is under delegate's data folder, not the session's

    @property
    def written(self) -> bool:
        return self.document is not None

    @property
    def continued(self) -> bool:
        return self.successor_id is not None

    @property
    def pending(self) -> bool:
        """Written, and waiting for a person to continue it."""
        return self.result in (HandoffResult.PENDING, HandoffResult.SPAWN_FAILED)


class ThresholdCrossing(Strict):
    """A context threshold a session crossed (recorded once per level)."""

    level: ContextLevel
    used_tokens: int
    limit_tokens: int
    crossed_at: datetime


class ContextReport(Strict):
    """Everything about a session's context: ``delegate context`` and the panel's details."""

    session: Session
    trend: tuple[int, ...] = ()  # context in use at each recent turn, oldest first
    breakdown: dict[str, int] = Field(default_factory=dict)  # tokens per MessageCategory
    crossings: tuple[ThresholdCrossing, ...] = ()
    chain: tuple[str, ...] = ()  # the hand-off chain, oldest first, this session included
    checkpoints: tuple[Checkpoint, ...] = ()
    handoffs: tuple[ContextDocument, ...] = ()  # this session's hand-off documents, newest first
    thresholds: dict[str, int] = Field(default_factory=dict)  # effective % per ContextLevel


class Run(Strict):
    """One launch or follow-up: every ``delegate`` call mints a fresh run id."""

    run_id: str
    conversation_id: str
    agent_id: str
    kind: RunKind
    prompt: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    usage: Usage = Field(default_factory=Usage)
    output: str = ""
    error: str | None = None
    stderr: str | None = None  # the tail of an agent CLI's standard error
    # While it runs (owned and stoppable from any process): the owner's last beat,
    # a stop asked by anyone, and the live tails other processes show (the reply
    # so far, the last lines of the agent's stderr) with when output last arrived.
    heartbeat_at: datetime | None = None
    cancel_requested: bool = False
    live_output: str | None = None
    stderr_tail: str | None = None
    last_output_at: datetime | None = None
    owner_kind: str = "other"
    owner_host: str | None = None
    owner_pid: int | None = None
    # The capsule this run's prompt carried (a launch with ``--capsule``).
    capsule_id: str | None = None
    capsule_digest: str | None = None

    @property
    def duration_s(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class SessionPage(Strict):
    sessions: list[Session]
    next_cursor: str | None


class MessagePage(Strict):
    messages: list[Message]
    next_cursor: str | None


class MessageMatch(Strict):
    """A message found by :meth:`AgentOrchestrator.find_message`, with the page ending at it."""

    message_id: str
    page: MessagePage  # newest first: the match, then the messages before it
    resume_cursor: str | None  # searching on from here finds older matches; None at the start


class TranscriptDetails(Strict):
    """The file an imported session is read from, as it is now."""

    path: Path
    size: int  # bytes on disk now (the import may have seen fewer)
    model: str | None  # the model the agent last used, when the transcript says


class TextSpan(Strict):
    """A range of a text, in characters (code points): ``text[start:end]``."""

    start: int
    end: int


class SearchSnippet(Strict):
    """The best-matching piece of a session, its matched words given as spans.

    ``role`` says where it comes from: the title, a prompt, or the assistant's text.
    """

    text: str
    highlights: list[TextSpan]
    role: Literal["title", "user", "assistant"]
    at: datetime | None = None


class SearchResult(Strict):
    """One session a search found; ``snippet`` is None when the query only filtered."""

    session: Session
    snippet: SearchSnippet | None = None
    score: float = 0.0  # bm25: lower is a better match (0 for a query of filters only)


class SearchPage(Strict):
    """Best matches first (then the most recently active); ``next_cursor`` pages on."""

    results: list[SearchResult]
    next_cursor: str | None


# --- tool requests -------------------------------------------------------


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


NonEmptyText = Annotated[str, StringConstraints(min_length=1), AfterValidator(_not_blank)]
# Strict: "3" or true are type errors in a tool call, not page sizes.
PageLimit = Annotated[StrictInt, Field(ge=1, le=MAX_PAGE)]


# Operations of ``delegate_sessions`` that act on one session named by its id.
_ON_ONE_SESSION = ("messages", "dismiss", "restore", "rename", "purge", "context")


class SessionsRequest(Strict):
    """``delegate_sessions``: list, search, page messages, archive, restore, rename, purge,
    report context, stop a run."""

    operation: Literal[
        "list",
        "messages",
        "dismiss",
        "search",
        "restore",
        "rename",
        "purge",
        "context",
        "stop",
        "capsule_gaps",
    ] = Field(
        description="list sessions, page a session's messages, search, dismiss (archive),"
        " restore from the archive, rename, purge an archived session, report a"
        " session's context (figures, window, thresholds, chain), stop a run in flight"
        " (whichever process drives it), or list the capsule gaps sub-agents reported"
        " (all, or those told to or by conversation_id)"
    )
    conversation_id: NonEmptyText | None = Field(
        default=None,
        description="required for messages, dismiss, restore, rename, purge and context;"
        " stop: the session whose run to stop (or run_id)",
    )
    run_id: NonEmptyText | None = Field(
        default=None, description="stop: the run to stop (or its session's conversation_id)"
    )
    name: str | None = Field(
        default=None, description="rename: the new name (one line, 200 characters); null clears"
    )
    force: bool = Field(
        default=False, description="purge: also a session still in the reusable pool"
    )
    archived: bool = Field(default=False, description="list: the archive instead of the pool")
    sort: SessionSort = Field(
        default=SessionSort.ACTIVITY, description="list: activity (newest first) or created"
    )
    query: str | None = Field(
        default=None,
        description='required for search: words, "phrases", prefix*, agent:, state:, branch:, cwd:',
    )
    cursor: str | None = Field(default=None, description="next_cursor of a previous page")
    limit: PageLimit | None = Field(
        default=None, description="page size, 1..100 (default 3 sessions, 10 messages)"
    )

    @model_validator(mode="after")
    def _needs_conversation(self) -> Self:
        op = self.operation
        if op in _ON_ONE_SESSION and self.conversation_id is None:
            raise ValueError(f"conversation_id is required for operation {op!r}")
        if op in (*_ON_ONE_SESSION[1:], "stop") and (
            self.cursor is not None or self.limit is not None
        ):
            raise ValueError(f"cursor and limit do not apply to operation {op!r}")
        if op == "stop" and (self.conversation_id is None) == (self.run_id is None):
            raise ValueError("operation 'stop' takes one of conversation_id or run_id")
        if op != "stop" and self.run_id is not None:
            raise ValueError("run_id applies to operation 'stop' only")
        if op != "rename" and self.name is not None:
            raise ValueError("name applies to operation 'rename' only")
        if op != "purge" and self.force:
            raise ValueError("force applies to operation 'purge' only")
        if op != "list" and (self.archived or self.sort is not SessionSort.ACTIVITY):
            raise ValueError("archived and sort apply to operation 'list' only")
        if (self.operation == "search") != (self.query is not None):
            raise ValueError("query is required for operation 'search', and only for it")
        if op == "capsule_gaps" and self.cursor is not None:
            raise ValueError("cursor does not apply to operation 'capsule_gaps'")
        if self.operation == "search" and self.conversation_id is not None:
            raise ValueError("conversation_id does not apply to operation 'search'")
        return self


class BatchItem(Strict):
    prompt: NonEmptyText
    agent_id: str | None = None
    cwd: str | None = None
    group_id: NonEmptyText | None = Field(
        default=None, description="compact returns: this delegate's group (the request's role)"
    )


class AgentRequest(Strict):
    """``delegate_agent``: launch a delegate, or follow up on an existing conversation."""

    prompt: NonEmptyText | None = Field(default=None, description="the task or follow-up")
    agent_id: NonEmptyText | None = Field(
        default=None, description="agent to run; defaults to the session's on follow-up"
    )
    conversation_id: NonEmptyText | None = Field(
        default=None, description="continue this session instead of launching a new one"
    )
    batch: list[BatchItem] | None = Field(
        default=None, min_length=1, description="launch several delegates at once"
    )
    cwd: str | None = Field(default=None, description="working directory for a launch")
    mode: SessionMode = Field(default=SessionMode.STANDARD, description="standard or detached")
    parent_id: NonEmptyText | None = Field(
        default=None,
        description="launch as a sub-agent of this session: its own window (clamped to the"
        " child's model), the parent's system and context messages shared once",
    )
    capsule: NonEmptyText | None = Field(
        default=None,
        description="launches only: a context capsule to inject into the first prompt,"
        " 'latest' (the newest of the launch folder's branch) or a path in its repository",
    )
    allow_secrets: bool = Field(
        default=False, description="launch even though the capsule holds what looks like a secret"
    )
    accept_stale: bool = Field(
        default=False,
        description="launch even though files the capsule references changed since it was written",
    )
    agent_role: NonEmptyText | None = Field(
        default=None,
        description=(
            "compact returns (seed 002): run the delegate as this role (developer, qa_expert,"
            " tech_lead, project_manager, senior_software_engineer, investigator,"
            " requirements_engineer); it writes a hand-off file and the response is its"
            " status and three summary lines, never its full text"
        ),
    )
    group_id: NonEmptyText | None = Field(
        default=None, description="compact returns: the task group the role works on"
    )
    artifacts_session: NonEmptyText | None = Field(
        default=None,
        description=(
            "compact returns: the id naming .delegate/artifacts/<id>/ (default: parent_id,"
            " else a new one, answered so later roles can pass it)"
        ),
    )
    chain: bool = Field(
        default=False,
        description=(
            "compact returns: route each return to the next role and run it, until the end"
            " status, an invalid return or the step limit; one display line per step"
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _not_a_session_operation(cls, data: Any) -> Any:
        # Lifecycle operations live in delegate_sessions (seed 001): say where to go.
        if isinstance(data, dict) and ("operation" in data or "stop" in data):
            raise ValueError(
                "delegate_agent only launches or follows up; to stop a run call"
                ' delegate_sessions {"operation": "stop", "conversation_id": ...} (or "run_id")'
            )
        return data

    @model_validator(mode="after")
    def _check_shape(self) -> Self:
        if self.conversation_id is not None and self.batch is not None:
            raise ValueError("conversation_id and batch are mutually exclusive")
        if self.batch is not None and self.prompt is not None:
            raise ValueError("give either prompt or batch, not both")
        if self.batch is None and self.prompt is None:
            raise ValueError("prompt is required")
        if self.conversation_id is not None and self.cwd is not None:
            raise ValueError("cwd applies to launches only; a follow-up runs in the session's cwd")
        if self.conversation_id is not None and self.parent_id is not None:
            raise ValueError("parent_id applies to launches only")
        if self.conversation_id is not None and self.capsule is not None:
            raise ValueError("capsule applies to launches only")
        if self.capsule is None and (self.allow_secrets or self.accept_stale):
            raise ValueError("allow_secrets and accept_stale apply to a launch with a capsule")
        if self.agent_role is None and (
            self.group_id is not None
            or self.artifacts_session is not None
            or self.chain
            or any(item.group_id is not None for item in self.batch or ())
        ):
            raise ValueError("group_id, artifacts_session and chain need an agent_role")
        if self.agent_role is not None and self.conversation_id is not None:
            raise ValueError("agent_role applies to launches only")
        if self.agent_role is not None and self.batch is None and self.group_id is None:
            raise ValueError("agent_role needs a group_id")
        if self.agent_role is not None and self.batch is not None:
            if self.group_id is not None:
                raise ValueError("in a batch, give each item its own group_id")
            if any(item.group_id is None for item in self.batch):
                raise ValueError("agent_role needs a group_id on every batch item")
        return self
