"""Recording a run: the new session or the claimed one, its first messages, its capsule and notes.

Owns what a launch stores (title, window, shared parent context, capsule use) and what a
follow-up's prompt carries (notes and capsule gaps told since its last run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core import process_identity
from core.clock import to_us
from core.conversations.archive import SessionArchive
from core.conversations.sources import message_source
from core.errors import DelegateError
from core.events import (
    CapsuleGap,
    CapsuleInjected,
    ChildClamped,
    DelegateLaunched,
    FollowUpStarted,
    HistoryEvent,
)
from core.models import (
    Message,
    MessageCategory,
    Role,
    RunKind,
    RunStatus,
    Session,
    Usage,
)
from core.one_line import first_line_clipped
from core.runs.handle import CANCELLED_BY_USER
from core.runs.in_flight import RunsInFlight, uncancellable
from core.runs.plans import PlannedLaunch
from core.services import CoreServices, Wing
from core.store import NewMessage, NewRun, NewSession

if TYPE_CHECKING:
    from core.capsules.launch import PreparedCapsule
    from core.runners import RunRequest
    from core.runners.base import Runner

T = TypeVar("T")
TITLE_CHARS = 80


def title_from_prompt(prompt: str) -> str:
    """A launched session's title: its prompt's first line, clipped."""
    return first_line_clipped(prompt, TITLE_CHARS)


class RunRecorder(Wing):
    """Store a launch or a follow-up as a run in flight, in one transaction."""

    def __init__(self, core: CoreServices, flight: RunsInFlight, archiving: SessionArchive) -> None:
        super().__init__(core)
        self.flight = flight
        self.archiving = archiving

    async def record_launch(
        self, launch: PlannedLaunch, owner: process_identity.ProcessIdentity | None = None
    ) -> tuple[RunRequest, HistoryEvent]:
        """Store the new session and its first run (owned by ``owner``, else this process).

        A sub-agent of ``parent`` gets its own window (clamped below the
        parent's) and starts with the parent's system and context messages.
        With a ``capsule`` the first prompt carries it, and the run, the session
        and the capsule's registry row record it. As a ``role`` of a group, the prior
        hand-off block comes first and the hand-off protocol last. What the prompt
        carries (the capsule block, a hand-off ``document``) is stored as a context
        message after the prompt: a sub-agent inherits it, the turn is the task.
        """
        from core.context import subagents
        from core.context.windows import launch_window
        from core.documents.prompt import carried_context, compose_launch_prompt
        from core.gitinfo import current_branch
        from core.runners import RunRequest

        prompt, agent_id, runner, cwd, mode = (
            launch.prompt,
            launch.agent_id,
            launch.runner,
            launch.cwd,
            launch.mode,
        )
        parent, capsule, role, document = (
            launch.parent,
            launch.capsule,
            launch.role,
            launch.document,
        )
        title = title_from_prompt(prompt)
        injected = capsule.injected if capsule is not None else None
        carried = carried_context(capsule=injected, document=document)
        asked = role.first_prompt(prompt) if role is not None else prompt
        prompt = compose_launch_prompt(prompt, capsule=injected, document=document)
        if role is not None:
            prompt = role.first_prompt(prompt)
        now = self.clock()
        at_us = to_us(now)
        conversation_id, run_id = self._new_id(), self._new_id()
        branch = await asyncio.to_thread(current_branch, cwd)
        config = self.settings.agents[agent_id]
        limit, window_source = launch_window(config, self.settings.context)
        # An agent that writes its own transcript (a real CLI) is the record
        # of the conversation: the importer indexes its file instead.
        message = (
            None
            if runner.owns_transcript
            else await self._prompt_message(asked if carried else prompt, run_id, at_us)
        )
        # Kept by us whichever agent runs it (an agent CLI's transcript holds it as the
        # prompt's text): what a sub-agent of this session inherits.
        context = (
            [await self._prompt_message(carried, run_id, at_us, MessageCategory.CONTEXT)]
            if carried
            else []
        )
        window = subagents.child_window(
            limit, window_source, parent.context.limit_tokens if parent is not None else 0
        )
        inherited = await self._parent_context(parent) if parent is not None else []
        # Ours store the share as the child's first messages; an agent CLI keeps
        # its own transcript, so it gets the share through its own option.
        shared = (
            []
            if runner.owns_transcript
            else subagents.shared_copies(inherited, self._new_id, at_us)
        )
        system_prompt = subagents.shared_instructions(inherited) if runner.owns_transcript else ""
        await self.claim(
            run_id,
            self.store.runs.start_launch(
                NewSession(
                    conversation_id=conversation_id,
                    agent_id=agent_id,
                    mode=mode,
                    cwd=str(cwd),
                    title=title,
                    created_us=at_us,
                    context_limit=window.limit_tokens,
                    git_branch=branch,
                    model=config.model,
                    parent_id=parent.conversation_id if parent is not None else None,
                    window_source=window.source,
                    clamped_from=window.clamped_from,
                    capsule_id=injected.document_id if injected else None,
                    capsule_digest=injected.digest if injected else None,
                ),
                NewRun(
                    run_id,
                    agent_id,
                    RunKind.LAUNCH,
                    prompt,
                    at_us,
                    owner,
                    self.flight.owner_kind_of(owner),
                    capsule_id=injected.document_id if injected else None,
                    capsule_digest=injected.digest if injected else None,
                ),
                message,
                shared,
                context,
            ),
        )
        if parent is not None and window.clamped_from is not None:
            await self.emitter.emit(
                ChildClamped(
                    at=now,
                    conversation_id=parent.conversation_id,
                    agent_id=parent.agent_id,
                    child_id=conversation_id,
                    child_agent_id=agent_id,
                    limit_tokens=window.limit_tokens,
                    parent_limit_tokens=window.clamped_from,
                )
            )
        if capsule is not None:
            await self._record_capsule(capsule, conversation_id, run_id, agent_id, now)
        started = DelegateLaunched(
            at=now,
            conversation_id=conversation_id,
            run_id=run_id,
            agent_id=agent_id,
            prompt=prompt,
            mode=mode,
        )
        request = RunRequest(
            run_id,
            conversation_id,
            agent_id,
            prompt,
            cwd,
            turn=1,
            system_prompt=system_prompt,
            writable_dirs=(role.paths.session_dir,) if role is not None else (),
        )
        return request, started

    async def _record_capsule(
        self,
        capsule: PreparedCapsule,
        conversation_id: str,
        run_id: str,
        agent_id: str,
        at: datetime,
    ) -> None:
        """The capsule's registry row names the session that used it; history says so."""
        from core.capsules.registry import record_use

        injected = capsule.injected
        await record_use(self.store, injected.document_id, conversation_id)
        await self.emitter.emit(
            CapsuleInjected(
                at=at,
                conversation_id=conversation_id,
                run_id=run_id,
                agent_id=agent_id,
                document_id=injected.document_id,
                digest=injected.digest,
                path=injected.path,
                accepted=capsule.accepted,
            )
        )

    async def record_follow_up(
        self,
        conversation_id: str,
        prompt: str,
        agent: str,
        runner: Runner,
        cwd: Path,
        owner: process_identity.ProcessIdentity | None = None,
    ) -> tuple[RunRequest, HistoryEvent]:
        """Claim the session for a follow-up run (owned by ``owner``, else this process)."""
        from core.runners import RunRequest

        now = self.clock()
        at_us = to_us(now)
        run_id = self._new_id()
        prompt = await self._with_parent_notes(conversation_id, prompt)
        message = (
            None if runner.owns_transcript else await self._prompt_message(prompt, run_id, at_us)
        )
        session = await self.claim(
            run_id,
            self.store.runs.claim_follow_up(
                conversation_id,
                NewRun(
                    run_id,
                    agent,
                    RunKind.FOLLOW_UP,
                    prompt,
                    at_us,
                    owner,
                    self.flight.owner_kind_of(owner),
                ),
                message,
            ),
        )
        if session.archived_at is not None:
            # Working in a session again brings it back from the archive.
            await self.archiving.restore(conversation_id)
        started = FollowUpStarted(
            at=now,
            conversation_id=conversation_id,
            run_id=run_id,
            agent_id=agent,
            prompt=prompt,
        )
        request = RunRequest(
            run_id,
            conversation_id,
            agent,
            prompt,
            cwd,
            turn=session.metrics.turns,
            context_tokens=session.context.used_tokens - (message.token_count if message else 0),
            is_follow_up=True,
        )
        return request, started

    async def _with_parent_notes(self, conversation_id: str, prompt: str) -> str:
        """``prompt`` after the notes recorded for this session since its last run began."""
        from core.capsules.gaps import with_gaps
        from core.context import subagents

        since_us = await self.store.runs.last_started_us(conversation_id)
        notes = await self.store.history.child_notes(conversation_id, since_us)
        gaps = await self.store.history.capsule_gaps(conversation_id, since_us=since_us)
        told = [
            g
            for g in reversed(gaps)
            if isinstance(g, CapsuleGap) and g.source_id == conversation_id
        ]
        prompt = with_gaps(prompt, told)
        return subagents.with_notes(prompt, [n for n in notes if isinstance(n, ChildClamped)])

    async def _parent_context(self, parent: Session) -> list[Message]:
        """The parent's system and context messages, oldest first (what a child inherits;
        an imported parent's: see :meth:`TranscriptMessages.shared`)."""
        from core.context import subagents

        source = await message_source(self.store, parent.conversation_id)
        return await source.shared(subagents.SHARED_CATEGORIES, subagents.MAX_SHARED_MESSAGES)

    async def _prompt_message(
        self, prompt: str, run_id: str, at_us: int, category: MessageCategory | None = None
    ) -> NewMessage:
        from core.tokens import count_tokens

        tokens = await asyncio.to_thread(count_tokens, prompt)
        return NewMessage(
            self._new_id(), Role.USER, prompt, at_us, tokens, run_id=run_id, category=category
        )

    async def claim(self, run_id: str, claim: Awaitable[T]) -> T:
        """Await the transaction that records a run; a cancel there leaves no run open.

        A cancel can land after the COMMIT reached the database but before the
        caller saw it: the run then exists with no task to close it, so it is
        closed here (``cancelled``) before the cancel goes on.
        """
        try:
            return await claim
        except asyncio.CancelledError:
            await uncancellable(self._abandon(run_id))
            raise

    async def _abandon(self, run_id: str) -> None:
        try:
            run = await self.store.runs.get(run_id)
        except DelegateError:
            return  # never committed: nothing to close
        if run.status is RunStatus.RUNNING:
            await self.store.runs.finish(
                run_id,
                RunStatus.CANCELLED,
                Usage(),
                "",
                CANCELLED_BY_USER,
                to_us(self.clock()),
                None,
            )
