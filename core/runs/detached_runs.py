"""Detached runs: a worker process of their own drives each (the handshake: core/detached.py).

Owns the caller's half (start a worker, record the run as its, follow it through the
store) and the worker's half (drive the run it was handed).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core import process_identity
from core.errors import DelegateError, NotRunning
from core.events import (
    DelegateLaunched,
    FollowUpStarted,
    HistoryEvent,
    ReturnAccepted,
    ReturnRejected,
)
from core.models import Run, RunKind, RunStatus
from core.runs.closing import RunCloser
from core.runs.driver import RunDriver
from core.runs.handle import RunHandle
from core.runs.in_flight import RunsInFlight
from core.runs.plans import PlannedLaunch, RunPlans
from core.runs.recording import RunRecorder
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.detached import GoMessage, Worker
    from core.returns.launch import PreparedRole
    from core.runners import RunRequest
    from core.runners.base import Runner

DETACHED_POLL_S = 0.1  # how often a handle of a detached run reads it back while waiting
# The history events a role's judged return makes (one or the other).
RETURN_EVENT_KINDS = (
    ReturnAccepted.model_fields["kind"].default,
    ReturnRejected.model_fields["kind"].default,
)


class DetachedRuns(Wing):
    """Launch and follow up in worker processes; drive a run as its worker."""

    def __init__(
        self,
        core: CoreServices,
        plans: RunPlans,
        recorder: RunRecorder,
        driver: RunDriver,
        closer: RunCloser,
        flight: RunsInFlight,
    ) -> None:
        super().__init__(core)
        self.plans = plans
        self.recorder = recorder
        self.driver = driver
        self.closer = closer
        self.flight = flight

    async def launch(self, launch: PlannedLaunch) -> RunHandle:
        """A launch its own worker process drives; returns once it is recorded."""
        await self._warm_up(launch.prompt)
        return await self._detach(
            RunKind.LAUNCH,
            lambda owner: self.recorder.record_launch(launch, owner),
            launch.role,
        )

    async def follow_up(self, conversation_id: str, prompt: str, agent_id: str | None) -> RunHandle:
        """A follow-up its own worker process drives; returns once the session is claimed."""
        agent, runner, cwd = await self.plans.check_follow_up(conversation_id, agent_id)
        await self._warm_up(prompt)
        return await self._detach(
            RunKind.FOLLOW_UP,
            lambda owner: self.recorder.record_follow_up(
                conversation_id, prompt, agent, runner, cwd, owner
            ),
        )

    @staticmethod
    async def _warm_up(prompt: str) -> None:
        """Load the token encoding before the worker starts, not while it starts.

        Counting the prompt again when it is recorded is then quick; done
        while the worker's own start-up competes for the cores, loading the
        encoding would make the caller's answer wait.
        """
        from core.tokens import count_tokens

        await asyncio.to_thread(count_tokens, prompt)

    async def _detach(
        self,
        kind: RunKind,
        record: Callable[
            [process_identity.ProcessIdentity], Awaitable[tuple[RunRequest, HistoryEvent]]
        ],
        role: PreparedRole | None = None,
    ) -> RunHandle:
        """Start a worker, record the run as the worker's, then hand it the run.

        The worker exists before the run is recorded, so the run never has an
        owner that is not alive; a refused or cancelled record stops the worker
        before it touched anything (the handshake: core/detached.py).
        """
        from core.detached import GoMessage, spawn_worker

        worker = spawn_worker(self.store.path.parent)
        try:
            request, _started = await record(worker.identity)  # the worker stores it
        except BaseException:
            worker.abandon()
            raise
        worker.go(
            GoMessage(
                request.run_id,
                self.settings,
                str(request.cwd),
                request.turn,
                request.context_tokens,
                request.system_prompt,
                role.launch if role is not None else None,
            )
        )
        handle = RunHandle(request.run_id, request.conversation_id, request.agent_id, kind)
        handle._follow = functools.partial(self._follow_detached, request.run_id, worker, role)
        handle._stop = worker.stop
        return handle

    async def _follow_detached(
        self, run_id: str, worker: Worker | None = None, role: PreparedRole | None = None
    ) -> Run:
        """The run as stored once it is closed, whichever process closes it (a role's:
        once its return is recorded too)."""
        while (run := await self.store.runs.get(run_id)).status is RunStatus.RUNNING:
            # A worker that died never closes its run: any reader does.
            if not await self.store.runs.interrupt_dead_runs(run.conversation_id):
                await asyncio.sleep(DETACHED_POLL_S)
        if role is not None and worker is not None:
            await self._await_detached_return(run, worker, role)
        return run

    async def _await_detached_return(self, run: Run, worker: Worker, role: PreparedRole) -> None:
        """Wait for the worker to record the role's return and say so in history (two
        writes: a caller that saw only the first returned before the history event); a
        worker that ended without them (killed) leaves the rest to this caller."""
        while not await self._return_told(run.run_id):
            if worker.process.poll() is not None:
                # Gone: it told the return before exiting, or never will.
                if not await self._return_told(run.run_id):
                    step = await self.store.returns.by_run(run.run_id)
                    if step is None:  # judged from the stored output
                        await self.closer.judge_return(role, run, run.output)
                    else:  # recorded, then killed before its history event
                        from core.returns.launch import return_event

                        await self.emitter.emit(return_event(step, run.agent_id, self.clock()))
                return
            await asyncio.sleep(DETACHED_POLL_S)

    async def _return_told(self, run_id: str) -> bool:
        """Whether a role's run has its return recorded and its history event stored."""
        if await self.store.returns.by_run(run_id) is None:
            return False
        return await self.store.history.has_run_event(run_id, RETURN_EVENT_KINDS)

    async def start_detached(self, go: GoMessage) -> RunHandle:
        """Drive the run a caller recorded for this process (the worker's half).

        The run must be in flight and owned by this very process (pid, start
        time, host): a go message naming any other run is ``not_running``.
        Its ``started`` history event is stored here, when the run starts.
        """
        from core.detached import UnavailableRunner
        from core.returns.launch import plan_role
        from core.runners import RunRequest

        flight = await self.store.runs.in_flight(go.run_id)
        me = process_identity.current()
        if (
            flight is None
            or flight.run_id != go.run_id
            or (flight.owner_host_id, flight.owner_pid, flight.owner_started)
            != (me.host_id, me.pid, me.started)
        ):
            raise NotRunning(go.run_id, "it is not a run recorded for this worker")
        run = await self.store.runs.get(go.run_id)
        session = await self.store.sessions.get(run.conversation_id)
        follow_up = run.kind is RunKind.FOLLOW_UP
        request = RunRequest(
            run.run_id,
            run.conversation_id,
            run.agent_id,
            run.prompt,
            Path(go.cwd),
            turn=go.turn,
            context_tokens=go.context_tokens,
            is_follow_up=follow_up,
            system_prompt=go.system_prompt,
        )
        started: HistoryEvent
        if follow_up:
            started = FollowUpStarted(
                at=run.started_at,
                conversation_id=run.conversation_id,
                run_id=run.run_id,
                agent_id=run.agent_id,
                prompt=run.prompt,
            )
        else:
            started = DelegateLaunched(
                at=run.started_at,
                conversation_id=run.conversation_id,
                run_id=run.run_id,
                agent_id=run.agent_id,
                prompt=run.prompt,
                mode=session.mode,
            )
        runner: Runner
        try:
            _, runner = self.plans.runner_for(run.agent_id)
            if go.role is not None:
                # The caller checked the ids and made the folders: the same paths here.
                self.flight.roles[run.run_id] = plan_role(go.role, Path(go.cwd))
        except DelegateError as exc:  # e.g. its script vanished since the caller checked
            runner = UnavailableRunner(exc.message)
        return self.driver.start(request, runner, run.kind, started)
