"""History events and the async bus that carries them to every front end.

Events are plain pydantic models (never Textual messages); the TUI adapts them
in one place. History events are also stored, so a new panel can show the past.
"""

# Annotations are evaluated as the classes are made (no `from __future__ import
# annotations`): pydantic would otherwise evaluate each string itself, which costs
# about twice as much, and these classes are made before the panel's first frame.

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from core.models import ContextLevel, HandoffOutcome, RunStatus, SessionMode, Usage

log = logging.getLogger(__name__)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    at: datetime
    conversation_id: str


class DelegateLaunched(_Event):
    kind: Literal["delegate_launched"] = "delegate_launched"
    run_id: str
    agent_id: str
    prompt: str
    mode: SessionMode


class DelegateFinished(_Event):
    """A launch's first run ended (completed, failed or cancelled)."""

    kind: Literal["delegate_finished"] = "delegate_finished"
    run_id: str
    agent_id: str
    status: RunStatus
    duration_s: float
    usage: Usage
    error: str | None = None


class FollowUpStarted(_Event):
    kind: Literal["follow_up_started"] = "follow_up_started"
    run_id: str
    agent_id: str
    prompt: str


class FollowUpCompleted(_Event):
    kind: Literal["follow_up_completed"] = "follow_up_completed"
    run_id: str
    agent_id: str
    prompt: str
    status: RunStatus
    duration_s: float
    usage: Usage
    error: str | None = None


class SessionDismissed(_Event):
    """Archived: out of the reusable pool, everything stored kept."""

    kind: Literal["session_dismissed"] = "session_dismissed"
    agent_id: str
    title: str


class SessionRestored(_Event):
    """Back from the archive into the reusable pool."""

    kind: Literal["session_restored"] = "session_restored"
    agent_id: str
    title: str


class SessionRenamed(_Event):
    """Given a name in delegate (``name`` None: the name was cleared)."""

    kind: Literal["session_renamed"] = "session_renamed"
    agent_id: str
    title: str
    name: str | None


class SessionPurged(_Event):
    """What delegate stored for it was freed; the id is remembered so no import brings it back."""

    kind: Literal["session_purged"] = "session_purged"
    agent_id: str
    title: str


class RunInterrupted(_Event):
    """A run whose owner died or stopped beating was closed by whoever noticed."""

    kind: Literal["run_interrupted"] = "run_interrupted"
    run_id: str
    agent_id: str
    reason: str


class ContextThresholdCrossed(_Event):
    """A session's context crossed a threshold (once per level per session, ever)."""

    kind: Literal["context_threshold"] = "context_threshold"
    agent_id: str
    level: ContextLevel
    used_tokens: int
    limit_tokens: int
    percent: float
    estimated: bool = False


class ChildClamped(_Event):
    """A sub-agent's window was clamped below its parent's (``conversation_id``: the parent)."""

    kind: Literal["child_clamped"] = "child_clamped"
    agent_id: str
    child_id: str
    child_agent_id: str
    limit_tokens: int
    parent_limit_tokens: int


class HandoffWritten(_Event):
    """A hand-off document was written for ``conversation_id`` and registered."""

    kind: Literal["handoff_written"] = "handoff_written"
    agent_id: str
    document_id: str
    path: str
    producer: str  # agent | facts
    previous_id: str | None = None
    pending: bool = False  # a person continues it (HANDOFF_PENDING.md written beside it)


class HandoffFailed(_Event):
    """Writing a hand-off, or continuing from one, failed; retried at the next turn."""

    kind: Literal["handoff_failed"] = "handoff_failed"
    agent_id: str
    stage: Literal["write", "spawn"]
    reason: str


class HandoffModified(_Event):
    """A hand-off's file no longer has the digest delegate registered for it (edited on
    disk): it was not given to the session it was meant for (``consumer``) and waits for
    a person to review it. ``conversation_id``: the session that wrote it, else ``consumer``."""

    kind: Literal["handoff_changed"] = "handoff_changed"
    agent_id: str = ""
    document_id: str
    path: str
    consumer: str = ""


class SessionContinued(_Event):
    """Work moved on: ``conversation_id`` continues in ``successor_id`` from a hand-off."""

    kind: Literal["session_continued"] = "session_continued"
    successor_id: str
    agent_id: str
    document_id: str | None = None


class HandoffSettled(_Event):
    """How a hand-off of ``conversation_id`` ended, whatever happened: written or not
    (and where), continued (in whom) or pending (the note a person reads)."""

    kind: Literal["handoff_settled"] = "handoff_settled"
    agent_id: str
    outcome: HandoffOutcome


class CheckpointMarked(_Event):
    """A checkpoint was marked (or a session forked from one: ``forked_to``)."""

    kind: Literal["checkpoint_marked"] = "checkpoint_marked"
    agent_id: str
    checkpoint_id: str
    seq: int
    label: str = ""
    forked_to: str | None = None
    restored: bool = False


class CapsuleSaved(_Event):
    """A capsule was saved and registered (``conversation_id``: its source session, or "")."""

    kind: Literal["capsule_saved"] = "capsule_saved"
    agent_id: str = ""
    document_id: str
    path: str
    producer: str  # agent | person
    draft: bool = False  # the agent's answer, waiting for review


class CapsuleInjected(_Event):
    """A launch's first prompt carried a capsule (``conversation_id``: the new session)."""

    kind: Literal["capsule_injected"] = "capsule_injected"
    run_id: str
    agent_id: str
    document_id: str
    digest: str
    path: str
    accepted: tuple[str, ...] = ()  # problems a person accepted at launch (stale, secrets)


class CapsuleGap(_Event):
    """A session launched with a capsule reported a ``Capsule Gap`` in its reply."""

    kind: Literal["capsule_gap"] = "capsule_gap"
    run_id: str
    agent_id: str
    document_id: str
    note: str
    # The main session told in its next prompt: the capsule's source session when it is
    # one of ours, else the reporter's parent (None: no session to tell).
    source_id: str | None = None


class CapsuleStale(_Event):
    """Files a capsule references changed since it was written (``conversation_id``: its
    source session, or "")."""

    kind: Literal["capsule_stale"] = "capsule_stale"
    agent_id: str = ""
    document_id: str
    path: str
    changed: tuple[str, ...]


class ReturnAccepted(_Event):
    """A role's run returned a valid compact return (``conversation_id``: that run's session)."""

    kind: Literal["return_accepted"] = "return_accepted"
    run_id: str
    agent_id: str
    artifacts_session: str
    group_id: str
    role: str
    status: str
    summary: tuple[str, ...]
    next_role: str | None = None  # a role, "end", or None when no route is configured
    handoff_path: str | None = None
    tokens: int = 0
    display: str = ""  # the seed's display line


class ReturnRejected(_Event):
    """A role's final message broke the protocol; the primary got INVALID_RETURN instead."""

    kind: Literal["return_rejected"] = "return_rejected"
    run_id: str
    agent_id: str
    artifacts_session: str
    group_id: str
    role: str
    rule: str  # a ReturnRule value
    reason: str
    tokens: int = 0


class ChainEnded(_Event):
    """A group's chain run by delegate stopped (``conversation_id``: its last step's session)."""

    kind: Literal["chain_ended"] = "chain_ended"
    agent_id: str = ""
    artifacts_session: str
    group_id: str
    steps: int
    final_status: str
    reason: str  # end (routed to the end) | invalid | no_route | step_limit | failed | cancelled


HistoryEvent = Annotated[
    DelegateLaunched
    | DelegateFinished
    | FollowUpStarted
    | FollowUpCompleted
    | SessionDismissed
    | SessionRestored
    | SessionRenamed
    | SessionPurged
    | RunInterrupted
    | ContextThresholdCrossed
    | ChildClamped
    | HandoffWritten
    | HandoffFailed
    | HandoffModified
    | SessionContinued
    | HandoffSettled
    | CheckpointMarked
    | CapsuleSaved
    | CapsuleInjected
    | CapsuleGap
    | CapsuleStale
    | ReturnAccepted
    | ReturnRejected
    | ChainEnded,
    Field(discriminator="kind"),
]
HISTORY_EVENT = TypeAdapter[HistoryEvent](HistoryEvent, config=ConfigDict(defer_build=True))


class RunOutput(BaseModel):
    """Transient: a chunk of a run's streamed reply (not stored as history)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["run_output"] = "run_output"
    conversation_id: str
    run_id: str
    text: str


class RunActivity(BaseModel):
    """Transient: what a run this process drives is doing (its stderr arrived).

    ``live_output`` is the tail of the reply so far, ``stderr_tail`` the last
    lines of the agent's standard error, both redacted; the same tails are
    stored (throttled) so panels of other processes see them too.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["run_activity"] = "run_activity"
    conversation_id: str
    run_id: str
    stderr_tail: str
    live_output: str
    at: datetime


class SessionsChanged(BaseModel):
    """Transient: sessions to re-read (changed or added by any process), and ids removed.

    Published by the supervisor for every change the store shows, including
    imports of transcripts the agents appended to.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["sessions_changed"] = "sessions_changed"
    conversation_ids: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


class RunsChanged(BaseModel):
    """Transient: runs whose status or activity changed (any process)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["runs_changed"] = "runs_changed"
    run_ids: tuple[str, ...]


TranscriptWatching = Literal["watching", "polling", "off"]


class WatchStatus(BaseModel):
    """Transient: how the supervisor watches transcripts, and whether it leads.

    ``polling`` is the fallback when a folder cannot be watched; ``reason`` says
    why, in words a person can act on. Published at start and on every change.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["watch_status"] = "watch_status"
    transcripts: TranscriptWatching
    reason: str | None = None
    leader: bool = False


SupervisorEvent = SessionsChanged | RunsChanged | WatchStatus
BusEvent = HistoryEvent | RunOutput | RunActivity | SupervisorEvent
Listener = Callable[[BusEvent], None]


class EventBus:
    """Fan-out of events to the callbacks of every front end that listens.

    A listener that raises is logged and the others still hear the event.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: BusEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # one broken front end must not stop the others
                log.exception("event listener failed on %s", event.kind)
