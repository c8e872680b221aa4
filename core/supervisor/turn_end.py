"""The context thresholds acted on by the turn that crossed them, in the run itself.

A front end that drives turns with no supervisor running (the JSON tools, MCP, a
detached worker) installs :func:`judge_turns` on its orchestrator: from then on every
run of that orchestrator, once stored and before its ``wait()`` returns, holds its
session against the thresholds as the supervisor's monitor does — each level newly
reached recorded and announced once (the store says which call was first), and at the
hand-off level the hand-off written and the work continued in a new session (or left
pending), under the session's hand-off lease. A supervisor running too finds the
crossings recorded and the hand-off registered (or its lease held): the same level is
never acted on twice. What the turn did is kept on the run's handle
(:class:`TurnEnd`), for the front end to say (:func:`turn_end_payload`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from core.context.thresholds import HandOff
from core.models import ContextDocument, ContextLevel, DocumentKind, DocumentStatus, HandoffOutcome
from core.orchestrator import AgentOrchestrator
from core.supervisor.context_monitor import (
    HANDOFF_LEASE_S,
    check_context,
    default_continuation,
    hand_off_once,
)
from core.supervisor.leader import new_holder
from core.supervisor.monitors import MonitorRepos

WAIT_OTHER_S = 120.0
"""How long a turn waits for another process (a supervisor) handing its session off."""
OTHER_POLL_S = 0.1


@dataclass(frozen=True)
class HandoffState:
    """The session's hand-off as the store has it once the turn's action is over."""

    document: ContextDocument | None
    continued_in: str | None
    failure: str | None = None  # what went wrong, when this turn asked for it
    under_way: bool = False  # another process holds the session's hand-off now


@dataclass(frozen=True)
class TurnEnd:
    """What the end of one turn found and did about its session's context."""

    conversation_id: str
    used_tokens: int
    limit_tokens: int
    percent: float
    level: ContextLevel
    crossed: tuple[ContextLevel, ...]  # newly reached by this turn, lowest first
    handoff: HandoffState | None  # None: no hand-off was due

    @property
    def worth_saying(self) -> bool:
        """Whether a front end has something to tell: a level crossed, a hand-off."""
        return bool(self.crossed) or self.handoff is not None


class _Kept:
    """A ``HandOff`` that keeps the outcome of the one it wraps."""

    def __init__(self, inner: HandOff) -> None:
        self.inner = inner
        self.outcome: object = None

    async def hand_off(self, conversation_id: str) -> object:
        self.outcome = await self.inner.hand_off(conversation_id)
        return self.outcome


class TurnJudge:
    """The orchestrator's ``after_turn``: judge the session of a turn that just ended."""

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        continuation: HandOff | None = None,
        *,
        lease_s: float = HANDOFF_LEASE_S,
        wait_other_s: float = WAIT_OTHER_S,
        repos: MonitorRepos | None = None,
    ) -> None:
        """``lease_s``: how long this hand-off keeps other processes off the session;
        ``wait_other_s``: how long a turn waits for another process's hand-off of it;
        ``repos``: the repositories it reads (the orchestrator's store's when not given)."""
        self.orchestrator = orchestrator
        self.repos = repos if repos is not None else MonitorRepos.of(orchestrator.store)
        self.continuation = continuation or default_continuation(orchestrator)
        self.lease_s = lease_s
        self.wait_other_s = wait_other_s
        self._handing_off: set[str] = set()  # sessions this judge is handing off now

    async def __call__(self, conversation_id: str) -> TurnEnd | None:
        """What this turn crossed and did; None when there is nothing to judge (thresholds
        off for the project, its window or figure unknown, the session gone)."""
        orch = self.orchestrator
        check = await check_context(orch, conversation_id, repos=self.repos)
        if check is None:
            return None
        handoff = None
        if check.wants_handoff and conversation_id not in self._handing_off:
            # (A turn of a hand-off this judge is making — the agent asked for its
            # document — ends here too: it is part of that hand-off, not a new one.)
            kept = _Kept(self.continuation)
            self._handing_off.add(conversation_id)
            try:
                asked = await hand_off_once(
                    orch,
                    kept,
                    conversation_id,
                    holder=new_holder(),
                    lease_s=self.lease_s,
                    repos=self.repos,
                )
            finally:
                self._handing_off.discard(conversation_id)
            failure = kept.outcome.failure if isinstance(kept.outcome, HandoffOutcome) else None
            # Another process at it (a supervisor's monitor): the turn ends once it is
            # done, so the next prompt already goes where the work continues.
            under_way = not asked and not await self._other_done(conversation_id)
            handoff = await _state(self.repos, conversation_id, failure, under_way=under_way)
        elif ContextLevel.HANDOFF in check.newly_crossed:
            found = await _state(self.repos, conversation_id, None, under_way=False)
            handoff = found if found.document is not None or found.continued_in else None
        usage = check.session.context
        return TurnEnd(
            conversation_id=conversation_id,
            used_tokens=usage.used_tokens,
            limit_tokens=usage.limit_tokens,
            percent=round(usage.percent, 1),
            level=check.level,
            crossed=check.newly_crossed,
            handoff=handoff,
        )

    async def _other_done(self, conversation_id: str) -> bool:
        """Wait (up to ``wait_other_s``) for another holder of the session's hand-off
        lease to let it go; False while it still holds it."""
        leases, clocks = self.repos.leases, self.orchestrator.clocks
        lease = f"handoff:{conversation_id}"
        deadline = asyncio.get_running_loop().time() + self.wait_other_s
        while await leases.holder(lease, clocks.wall_us(), clocks.mono_stamp()) is not None:
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(OTHER_POLL_S)
        return True


async def _state(
    repos: MonitorRepos, conversation_id: str, failure: str | None, *, under_way: bool
) -> HandoffState:
    found = await repos.documents.find(
        DocumentKind.HANDOFF, source_session=conversation_id, limit=1
    )
    session = await repos.sessions.get(conversation_id)
    return HandoffState(found[0] if found else None, session.continued_in, failure, under_way)


def judge_turns(orchestrator: AgentOrchestrator, continuation: HandOff | None = None) -> TurnJudge:
    """From now on, every turn ``orchestrator`` runs is judged when it ends (see the
    module's docstring). Idempotent: a judge already installed is kept."""
    if isinstance(orchestrator.after_turn, TurnJudge):
        return orchestrator.after_turn
    judge = TurnJudge(orchestrator, continuation)
    orchestrator.after_turn = judge
    return judge


def turn_end_payload(end: TurnEnd) -> dict[str, Any]:
    """A turn's end as the tools answer it (``context`` in a run's answer)."""
    handoff: dict[str, Any] | None = None
    if end.handoff is not None:
        document = end.handoff.document
        handoff = {
            "written": document is not None,
            "path": document.path if document is not None else None,
            "continued_in": end.handoff.continued_in,
            "pending": document is not None and document.status is DocumentStatus.PENDING,
            "under_way": end.handoff.under_way,
            "failure": end.handoff.failure,
        }
    return {
        "used_tokens": end.used_tokens,
        "limit_tokens": end.limit_tokens,
        "percent": end.percent,
        "level": end.level.value,
        "crossed": [level.value for level in end.crossed],
        "handoff": handoff,
    }
