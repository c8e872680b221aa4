"""Context thresholds acted on after every turn (seed 003 §1, §8).

After a turn — one of our runs closed, an imported transcript grew — the
session's context figure is held against its effective ``[context]`` settings
(the project's over the data folder's):

- every level newly reached is recorded once per session, ever (the store says
  which call was first, across processes and restarts) and announced with a
  :class:`~core.events.ContextThresholdCrossed` history event;
- from the ``handoff`` level on, while the session has no hand-off document
  and has not been continued, the hand-off is asked for (``HandOff.hand_off``):
  when it is first reached, and again after every later turn while it failed;
- at ``force`` nothing is sent from here: the orchestrator refuses further
  prompts to the session (``context_exhausted``).

Two ways in: :class:`ContextMonitor`, which the leading supervisor runs on every
session change it sees, and :func:`evaluate_context`, which a front end that
drives turns without a supervisor (``delegate run``, a detached worker, a hook)
calls after its turn. Both go through :func:`check_context`; a store lease per
session keeps two processes from handing the same session off at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from core.clock import to_us
from core.config import ContextSettings
from core.context.thresholds import HandOff, effective_context, levels_crossed
from core.continuation.service import Continuation
from core.errors import DelegateError, UnknownConversation
from core.events import ContextThresholdCrossed
from core.models import ContextLevel, DocumentKind, Session, SessionState
from core.orchestrator import AgentOrchestrator
from core.supervisor.leader import new_holder
from core.supervisor.monitors import MonitorRepos

if TYPE_CHECKING:
    from core.supervisor.monitors import SupervisorView

log = logging.getLogger(__name__)

HANDOFF_LEASE_S = 600.0
"""How long one process may hold a session's hand-off before another may try
(a hand-off the agent writes is a whole turn; a holder that died frees it then)."""
LIVE_WITHIN_S = 3600.0
"""The monitor acts on sessions active this recently: importing an old transcript
all at once is not a turn happening now (its crossings wait for its next turn)."""
STOP_WAIT_S = 5.0
"""How long the monitor's stop waits for hand-offs in flight before cancelling them."""

_BUSY = (SessionState.RUNNING, SessionState.PENDING)
"""A turn is in flight: a hand-off waits for it to end."""


@dataclass(frozen=True)
class ContextCheck:
    """What one evaluation found."""

    session: Session
    settings: ContextSettings
    reached: tuple[ContextLevel, ...]  # every level at or below the figure, lowest first
    newly_crossed: tuple[ContextLevel, ...]  # recorded (and announced) by this call

    @property
    def level(self) -> ContextLevel:
        return self.reached[-1] if self.reached else ContextLevel.OK

    @property
    def wants_handoff(self) -> bool:
        """At or past the hand-off level, not continued yet, not busy with a turn, and
        not a continuation still on the turn that read its hand-off."""
        session = self.session
        return (
            ContextLevel.HANDOFF in self.reached
            and session.continued_in is None
            and session.state not in (*_BUSY, SessionState.HANDED_OFF)
            and session.archived_at is None
            and not self.only_primed
        )

    @property
    def only_primed(self) -> bool:
        """A continuation that has done nothing but read its hand-off.

        Handing it off again would start the next continuation at once, and that one
        the next: a chain that grows with no work done in between. It hands off once
        it has done a turn of its own.
        """
        session = self.session
        return session.continued_from is not None and session.metrics.turns < 2


def _repos(orchestrator: AgentOrchestrator, repos: MonitorRepos | None) -> MonitorRepos:
    """``repos``, or the orchestrator's store's (for a caller that names none)."""
    return repos if repos is not None else MonitorRepos.of(orchestrator.store)


async def check_context(
    orchestrator: AgentOrchestrator, conversation_id: str, *, repos: MonitorRepos | None = None
) -> ContextCheck | None:
    """Record and announce every level ``conversation_id`` newly reached.

    None when there is nothing to judge: the session is gone, thresholds are off
    for its project, or its window or figure is unknown.
    """
    repos = _repos(orchestrator, repos)
    session = await _session_or_none(repos, conversation_id)
    return None if session is None else await _check(orchestrator, repos, session)


async def _check(
    orchestrator: AgentOrchestrator, repos: MonitorRepos, session: Session
) -> ContextCheck | None:
    conversation_id = session.conversation_id
    ctx = await asyncio.to_thread(effective_context, orchestrator.settings, session.cwd)
    usage = session.context
    if not ctx.enabled or usage.limit_tokens <= 0 or usage.used_tokens <= 0:
        return None
    reached = levels_crossed(usage.percent, ctx)
    newly: list[ContextLevel] = []
    for level in reached:
        now = orchestrator.clock()
        first = await repos.context.record_crossing(
            conversation_id, level, usage.used_tokens, usage.limit_tokens, to_us(now)
        )
        if first:
            newly.append(level)
            await orchestrator.emit(
                ContextThresholdCrossed(
                    at=now,
                    conversation_id=conversation_id,
                    agent_id=session.agent_id,
                    level=level,
                    used_tokens=usage.used_tokens,
                    limit_tokens=usage.limit_tokens,
                    percent=round(usage.percent, 1),
                    estimated=usage.estimated,
                )
            )
    return ContextCheck(session, ctx, tuple(reached), tuple(newly))


async def hand_off_once(
    orchestrator: AgentOrchestrator,
    continuation: HandOff,
    conversation_id: str,
    *,
    holder: str,
    lease_s: float = HANDOFF_LEASE_S,
    repos: MonitorRepos | None = None,
) -> bool:
    """Ask ``continuation`` for the hand-off of ``conversation_id`` unless another
    process is at it or a hand-off document exists already; True when it was asked."""
    lease = f"handoff:{conversation_id}"
    repos = _repos(orchestrator, repos)
    clocks = orchestrator.clocks
    if not await repos.leases.acquire(
        lease, holder, clocks.wall_us(), int(lease_s * 1_000_000), clocks.mono_stamp()
    ):
        return False
    try:
        # Looked at under the lease: another process may have just finished one.
        if await has_handoff(orchestrator, conversation_id, repos=repos):
            return False
        await continuation.hand_off(conversation_id)
        return True
    finally:
        with contextlib.suppress(DelegateError):  # it expires by itself
            await repos.leases.release(lease, holder)


ATTACHED_LEASE = "attached:{}"
"""Held (per session) while delegate runs the session's Claude Code on a terminal
with its hooks in it: the hooks ask the agent for its own hand-off, so the monitor
builds none from facts meanwhile (see core.hooks.attached)."""


async def left_to_its_hooks(
    orchestrator: AgentOrchestrator, conversation_id: str, *, repos: MonitorRepos | None = None
) -> bool:
    """Whether the session runs attached, its hand-off left to its hooks."""
    name = ATTACHED_LEASE.format(conversation_id)
    clocks = orchestrator.clocks
    leases = _repos(orchestrator, repos).leases
    return await leases.holder(name, clocks.wall_us(), clocks.mono_stamp()) is not None


async def has_handoff(
    orchestrator: AgentOrchestrator, conversation_id: str, *, repos: MonitorRepos | None = None
) -> bool:
    """Whether a hand-off document of this session is registered."""
    found = await _repos(orchestrator, repos).documents.find(
        DocumentKind.HANDOFF, source_session=conversation_id, limit=1
    )
    return bool(found)


def default_continuation(orchestrator: AgentOrchestrator) -> HandOff:
    """The hand-off service front ends use when they name none: delegate's own
    (writes the document, continues in a new session or leaves it pending)."""
    return Continuation(orchestrator)


async def evaluate_context(
    orchestrator: AgentOrchestrator,
    conversation_ids: Iterable[str],
    *,
    continuation: HandOff | None,
    repos: MonitorRepos | None = None,
) -> None:
    """Judge the sessions a turn just ended in, as the monitor would, and wait for
    any hand-off to be done. For front ends that drive turns without a supervisor.

    ``continuation`` None: crossings are recorded and announced, no hand-off is
    asked for. Never raises for a session's problem (a broken project settings
    file, a busy store): it is logged, and the next turn tries again.
    """
    holder = new_holder()
    repos = _repos(orchestrator, repos)
    for conversation_id in conversation_ids:
        try:
            check = await check_context(orchestrator, conversation_id, repos=repos)
            if check is not None and check.wants_handoff and continuation is not None:
                await hand_off_once(
                    orchestrator, continuation, conversation_id, holder=holder, repos=repos
                )
        except DelegateError as exc:
            log.warning("context of %s: %s", conversation_id, exc)
        except Exception:
            log.exception("evaluating the context of %s failed", conversation_id)


class ContextMonitor:
    """The supervisor's monitor of context thresholds (see the module's docstring).

    ``continuation``: what writes hand-offs (None: :func:`default_continuation`).
    ``live_within_s``: only sessions active this recently are judged.
    ``lease_s``: how long a hand-off in flight keeps other processes off the session.
    Hand-offs run in tasks of their own, so a slow one never holds the watchers up.
    """

    def __init__(
        self,
        continuation: HandOff | None = None,
        *,
        live_within_s: float = LIVE_WITHIN_S,
        lease_s: float = HANDOFF_LEASE_S,
    ) -> None:
        self.continuation = continuation
        self.live_within_s = live_within_s
        self.lease_s = lease_s
        self._holder = new_holder()
        self._in_flight: dict[str, asyncio.Task[None]] = {}
        # The turn of each session's last hand-off attempt: a failed one is
        # tried again after the next turn, not on every change of this one.
        self._attempted_at_turn: dict[str, int] = {}

    async def on_tick(self, supervisor: SupervisorView) -> None:
        return None

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        orchestrator = supervisor.orchestrator
        live_since = orchestrator.clock() - timedelta(seconds=self.live_within_s)
        try:  # one read for the batch: an import's changes name thousands, most not live
            sessions = await orchestrator.get_sessions(ids, active_since=live_since)
        except DelegateError as exc:
            log.warning("context of %d changed sessions: %s", len(ids), exc)
            return
        for session in sessions.values():
            try:
                await self._judge(orchestrator, supervisor.repos, session)
            except DelegateError as exc:
                log.warning("context of %s: %s", session.conversation_id, exc)

    async def _judge(
        self, orchestrator: AgentOrchestrator, repos: MonitorRepos, session: Session
    ) -> None:
        conversation_id = session.conversation_id
        check = await _check(orchestrator, repos, session)
        if check is None or not check.wants_handoff:
            return
        if await left_to_its_hooks(orchestrator, conversation_id, repos=repos):
            return  # its hooks ask the agent for its own, in its turn
        if self.continuation is None:
            self.continuation = default_continuation(orchestrator)
        continuation = self.continuation
        turn = check.session.metrics.turns
        if conversation_id in self._in_flight:
            return
        if self._attempted_at_turn.get(conversation_id) == turn:
            return
        if await has_handoff(orchestrator, conversation_id, repos=repos):
            return
        self._attempted_at_turn[conversation_id] = turn
        task = asyncio.create_task(
            self._hand_off(orchestrator, repos, continuation, conversation_id),
            name=f"hand-off {conversation_id}",
        )
        self._in_flight[conversation_id] = task
        task.add_done_callback(lambda _t: self._in_flight.pop(conversation_id, None))

    async def _hand_off(
        self,
        orchestrator: AgentOrchestrator,
        repos: MonitorRepos,
        continuation: HandOff,
        conversation_id: str,
    ) -> None:
        try:
            await hand_off_once(
                orchestrator,
                continuation,
                conversation_id,
                holder=self._holder,
                lease_s=self.lease_s,
                repos=repos,
            )
        except DelegateError as exc:
            log.warning("hand-off of %s: %s", conversation_id, exc)
        except Exception:
            log.exception("hand-off of %s failed", conversation_id)

    async def drain(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Wait for the hand-offs in flight (up to ``timeout_s``), then cancel the rest."""
        tasks = list(self._in_flight.values())
        if not tasks:
            return
        _done, late = await asyncio.wait(tasks, timeout=timeout_s)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)


async def _session_or_none(repos: MonitorRepos, conversation_id: str) -> Session | None:
    try:
        return await repos.sessions.get(conversation_id)
    except UnknownConversation:
        return None
