"""Launches and follow-ups: a request checked, planned, recorded and started (here or detached).

Owns the order of a launch: validate, plan every item, then record and start each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.conversations.ids import SessionIds
from core.errors import InvalidRequest
from core.models import AgentRequest, RunKind, SessionMode
from core.requests import validate
from core.runs.detached_runs import DetachedRuns
from core.runs.driver import RunDriver
from core.runs.handle import RunHandle
from core.runs.in_flight import RunsInFlight
from core.runs.plans import PlannedLaunch, RunPlans
from core.runs.recording import RunRecorder
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.capsules.launch import CapsuleAcceptance
    from core.returns.model import RoleLaunch


class Launcher(Wing):
    """The ``delegate`` verb: launch new delegates or follow up on a session."""

    def __init__(
        self,
        core: CoreServices,
        ids: SessionIds,
        plans: RunPlans,
        recorder: RunRecorder,
        driver: RunDriver,
        detached: DetachedRuns,
        flight: RunsInFlight,
    ) -> None:
        super().__init__(core)
        self.ids = ids
        self.plans = plans
        self.recorder = recorder
        self.driver = driver
        self.detached = detached
        self.flight = flight

    async def delegate(
        self,
        prompt: str | None = None,
        agent_id: str | None = None,
        conversation_id: str | None = None,
        batch: list[dict[str, Any]] | None = None,
        cwd: str | None = None,
        mode: SessionMode | str = SessionMode.STANDARD,
        parent_id: str | None = None,
        capsule: str | None = None,
        accept: CapsuleAcceptance | None = None,
        roles: Sequence[RoleLaunch] | None = None,
        document: str = "",
    ) -> list[RunHandle]:
        """Launch new delegates, or follow up on ``conversation_id``.

        Returns one handle per run started (several only for ``batch``). Every
        call mints fresh run ids; a follow-up keeps its conversation id.
        ``mode="detached"``: each run is handed to a worker process of its own
        and this returns once it is recorded; the handles follow the run
        through the store (see :meth:`DetachedRuns.launch`).

        ``parent_id``: each launch is a sub-agent of that session (seed 004):
        its own window, clamped when its model's is below the parent's (a
        ``child_clamped`` note for the parent, in its next prompt), and the
        parent's system and context messages copied once.

        ``capsule`` (launches only): ``latest`` or a path in the launch's repository.
        It is checked first (refused over budget, with secrets or stale unless
        ``accept`` says so; nothing is started then) and its body goes into the first
        prompt under ``## Context Capsule``, after the task (seed 000).

        ``document`` (launches only): the text of a document the launch continues
        from (a hand-off), sent after the prompt and stored as context, as a capsule's
        block is (a sub-agent of the session inherits both).

        ``roles`` (launches only, one per launch in order): each launch runs as that
        role of its group (seed 002). Its first prompt gets the prior hand-off block
        and the hand-off protocol; when its run ends, its final message is judged,
        routed and recorded (:meth:`RunCloser.return_step`) and ``ReturnAccepted`` or
        ``ReturnRejected`` goes out, before the handle's ``wait()`` returns.
        """
        from core.returns.launch import check_roles
        from core.returns.routing import Routes

        request = validate(
            AgentRequest,
            {
                k: v
                for k, v in {
                    "prompt": prompt,
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "batch": batch,
                    "cwd": cwd,
                    "mode": mode,
                    "parent_id": parent_id,
                    "capsule": capsule,
                }.items()
                if v is not None
            },
        )
        if roles is not None:
            if request.conversation_id is not None:
                raise InvalidRequest("roles apply to launches only, not to a follow-up")
            check_roles(roles, len(request.batch) if request.batch is not None else 1)
            Routes.from_settings(self.settings.returns)  # a bad table starts nothing
        started: list[RunHandle] = []
        detached = request.mode is SessionMode.DETACHED
        launch = self.detached.launch if detached else self._launch
        parent = (
            await self.store.sessions.get(await self.ids.resolve_id(request.parent_id))
            if request.parent_id is not None
            else None
        )
        try:
            if request.conversation_id is not None:
                assert request.prompt is not None
                named = await self.ids.resolve_id(request.conversation_id)
                conversation = await self.store.sessions.newest_in_chain(named)
                follow_up = self.detached.follow_up if detached else self._follow_up
                handle = await follow_up(conversation, request.prompt, request.agent_id)
                if conversation != named:
                    handle.routed_from = named
                started.append(handle)
                return started
            if request.batch is not None:
                # Check every item before starting any, so a bad item starts nothing.
                plans = [
                    (
                        item.prompt,
                        self.plans.runner_for(item.agent_id or request.agent_id),
                        self.plans.check_cwd(item.cwd or request.cwd),
                    )
                    for item in request.batch
                ]
                planned = self.plans.plan_roles(roles, [where for _p, _a, where in plans])
                capsules = [
                    await self.plans.capsule_for(request.capsule, where, accept)
                    for _p, _a, where in plans
                ]
                prepared = [await self.plans.role_folders(r) for r in planned]
                for (p, (agent, runner), where), carried, role in zip(
                    plans, capsules, prepared, strict=True
                ):
                    started.append(
                        await launch(
                            PlannedLaunch(
                                p,
                                agent,
                                runner,
                                where,
                                request.mode,
                                parent,
                                carried,
                                role,
                                document,
                            )
                        )
                    )
                return started
            assert request.prompt is not None
            agent, runner = self.plans.runner_for(request.agent_id)
            where = self.plans.check_cwd(request.cwd)
            [planned_one] = self.plans.plan_roles(roles, [where])
            carried = await self.plans.capsule_for(request.capsule, where, accept)
            role = await self.plans.role_folders(planned_one)
            started.append(
                await launch(
                    PlannedLaunch(
                        request.prompt,
                        agent,
                        runner,
                        where,
                        request.mode,
                        parent,
                        carried,
                        role,
                        document,
                    )
                )
            )
            return started
        except asyncio.CancelledError:
            # The caller will never see these handles: their runs stop too.
            for handle in started:
                handle.cancel()
            raise

    async def _launch(self, launch: PlannedLaunch) -> RunHandle:
        request, started = await self.recorder.record_launch(launch)
        if launch.role is not None:
            self.flight.roles[request.run_id] = launch.role
        return self.driver.start(request, launch.runner, RunKind.LAUNCH, started)

    async def _follow_up(
        self, conversation_id: str, prompt: str, agent_id: str | None
    ) -> RunHandle:
        agent, runner, cwd = await self.plans.check_follow_up(conversation_id, agent_id)
        request, started = await self.recorder.record_follow_up(
            conversation_id, prompt, agent, runner, cwd
        )
        return self.driver.start(request, runner, RunKind.FOLLOW_UP, started)
