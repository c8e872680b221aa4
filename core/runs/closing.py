"""Closing a run: its outcome stored, its context sampled, its return judged, its gaps told.

Owns what a finished run leaves behind: the history cell, the context sample, the
compact-return step of a role's run and the capsule gaps its reply reports.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import TYPE_CHECKING

from core.clock import to_us
from core.errors import DelegateError, UnknownConversation
from core.events import CapsuleGap, DelegateFinished, FollowUpCompleted, HistoryEvent
from core.models import Role, Run, RunStatus, Session, Usage
from core.redact import redact
from core.runs.in_flight import RunsInFlight
from core.runs.replies import RunReplies
from core.services import CoreServices, Wing
from core.store import NewMessage

if TYPE_CHECKING:
    from core.returns.launch import PreparedRole
    from core.returns.model import AgentRole, ReturnStep
    from core.runners import RunCompleted, RunFailed, RunRequest

log = logging.getLogger(__name__)


class RunCloser(Wing):
    """Store a run closed and everything its end decides."""

    def __init__(self, core: CoreServices, flight: RunsInFlight, replies: RunReplies) -> None:
        super().__init__(core)
        self.flight = flight
        self.replies = replies

    async def close_run(
        self,
        request: RunRequest,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        ended: RunCompleted | RunFailed | None = None,
        *,
        store_note: bool = True,
        partial: str = "",
    ) -> Run:
        from core.runners import MessageOut, RunCompleted
        from core.tokens import count_tokens

        if partial and store_note:  # what the agent said before it was cut short is kept
            await self.replies.store_reply(request, MessageOut(Role.ASSISTANT, partial))
        now = self.clock()
        note = None
        # Agents echo their environment on failure: nothing stored keeps a secret.
        output, error = redact(output), redact(error) if error is not None else None
        stderr = redact(ended.stderr) if ended is not None else None
        # A CLI's transcript is the session's record (previews read it as long as
        # we store no message of our own): its error stays on the run and in history.
        if error is not None and store_note:
            note = NewMessage(
                self._new_id(),
                Role.SYSTEM,
                f"run {status.value}: {error}",
                to_us(now),
                count_tokens(error),
                run_id=request.run_id,
            )
        completed = ended if isinstance(ended, RunCompleted) else None
        corrections = await self.replies.corrections(request.run_id)
        run = await self.store.runs.finish(
            request.run_id,
            status,
            usage,
            output,
            error,
            to_us(now),
            note,
            context_tokens=completed.context_tokens if completed else None,
            context_limit=completed.context_limit if completed else None,
            stderr=stderr,
            token_corrections=corrections,
        )
        await self._sample_context(request.conversation_id, to_us(now))
        duration = run.duration_s or 0.0
        status = run.status  # the first close wins: another process may have interrupted it
        event: HistoryEvent
        if request.is_follow_up:
            event = FollowUpCompleted(
                at=now,
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                agent_id=request.agent_id,
                prompt=request.prompt,
                status=status,
                duration_s=duration,
                usage=usage,
                error=error,
            )
        else:
            event = DelegateFinished(
                at=now,
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                agent_id=request.agent_id,
                status=status,
                duration_s=duration,
                usage=usage,
                error=error,
            )
        await self.emitter.emit(event)
        await self._report_gaps(request, output, now)
        self.flight.handles.pop(request.run_id, None)
        return run

    async def judge_return(
        self, role: PreparedRole, run: Run, final_message: str
    ) -> ReturnStep | None:
        """Judge, route and record a role's return, then say so in history.

        Never raises: the run is stored already, and a return that cannot be recorded
        is logged (the caller then finds no step for the run).
        """
        from core.returns.launch import judge, record_judged, return_event
        from core.returns.routing import Routes

        try:
            parsed = await asyncio.to_thread(
                judge,
                role,
                final_message,
                run,
                max_tokens=self.settings.returns.max_return_tokens,
            )
            now = self.clock()
            routes = Routes.from_settings(self.settings.returns)
            step = await record_judged(self.store, role, parsed, run, routes=routes, now=now)
            await self.emitter.emit(return_event(step, run.agent_id, now))
        except Exception:
            log.exception("recording the return of run %s failed", run.run_id)
            return None
        return step

    async def _report_gaps(self, request: RunRequest, output: str, at: datetime) -> None:
        """A ``Capsule Gap`` the reply of a capsule-launched session reports: one history
        event each, naming the capsule, so the main agent (and a person) hears of it."""
        from core.documents.prompt import capsule_gaps

        notes = capsule_gaps(output)
        if not notes:
            return
        session = await self.store.sessions.get(request.conversation_id)
        if session.capsule_id is None:
            return
        told = await self._gap_source(session, session.capsule_id)
        for note in notes:
            await self.emitter.emit(
                CapsuleGap(
                    at=at,
                    conversation_id=request.conversation_id,
                    run_id=request.run_id,
                    agent_id=request.agent_id,
                    document_id=session.capsule_id,
                    note=note,
                    source_id=told,
                )
            )

    async def _gap_source(self, session: Session, capsule_id: str) -> str | None:
        """The main session a gap is told to: the capsule's source session when it is one
        of ours (its marker is free text), else the reporter's parent."""
        try:
            source = (await self.store.documents.get(capsule_id)).source_session
        except DelegateError:  # the registry row was pruned since
            source = None
        if source and source != session.conversation_id:
            try:
                return (await self.store.sessions.get(source)).conversation_id
            except UnknownConversation:
                pass
        return session.parent_id

    async def _sample_context(self, conversation_id: str, at_us: int) -> None:
        """Keep the context figure of the turn that just closed (the trend and the rate)."""
        session = await self.store.sessions.get(conversation_id)
        context = session.context
        if context.known and session.metrics.turns > 0:
            await self.store.context.record_sample(
                conversation_id,
                session.metrics.turns,
                context.used_tokens,
                context.limit_tokens,
                at_us,
            )

    async def return_step(self, run_id: str) -> ReturnStep | None:
        """The compact-return step a role's run recorded (None: not a role's run, or
        not ended yet)."""
        return await self.store.returns.by_run(run_id)

    async def previous_handoff(self, session: str, group: str) -> tuple[AgentRole, str] | None:
        """The newest valid hand-off file of ``group`` in artifacts ``session``, with the
        role that wrote it: what the group's next role reads first."""
        for step in reversed(await self.store.returns.for_session(session, group)):
            # A registered file is one that was read valid when its return was recorded.
            if step.rule is None and step.document_id is not None and step.handoff_path:
                return step.role, step.handoff_path
        return None
