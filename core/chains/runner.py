"""``run_chains``: delegate routes each group's returns from role to role until a stop.

Each group starts with its first role (all first launches in one call, so a bad one
starts nothing). When a run ends, the orchestrator has judged and recorded its return
(:meth:`AgentOrchestrator.return_step`); its route names the next role, which is
launched with the previous role's hand-off file in its prompt. A group stops when a
return routes to the end, breaks the protocol, has no route, when its run fails or
``[returns] max_chain_steps`` is reached; the other groups go on. Groups run in
parallel; each stop is a ``chain_ended`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from core.capsules.launch import CapsuleAcceptance
from core.chains.report import ChainReport, ChainStep, GroupChain, StopReason
from core.config import Settings
from core.errors import DelegateError, InvalidConfig, InvalidRequest, UnknownRole
from core.events import ChainEnded
from core.models import Run, RunStatus
from core.orchestrator import AgentOrchestrator
from core.returns.display import display_line
from core.returns.launch import repo_relative, step_display
from core.returns.model import (
    END,
    INVALID_RETURN,
    ROLE_LABELS,
    AgentRole,
    ReturnRule,
    ReturnStep,
    RoleLaunch,
)
from core.returns.parse import rejected
from core.returns.schemas import role_of
from core.runs.handle import RunHandle

if TYPE_CHECKING:
    from core.store.sessions import SessionsRepository


@dataclass(frozen=True, slots=True)
class ChainStart:
    """A group's first launch; ``agent_id`` and ``cwd`` override the call's."""

    prompt: str
    launch: RoleLaunch
    agent_id: str | None = None
    cwd: str | None = None


async def run_chains(
    orch: AgentOrchestrator,
    *,
    first: Sequence[tuple[str, RoleLaunch] | ChainStart],
    agent_id: str | None,
    cwd: str | None,
    settings: Settings,
    parent_id: str | None = None,
    capsule: str | None = None,
    accept: CapsuleAcceptance | None = None,
    sessions: SessionsRepository | None = None,
) -> ChainReport:
    """Run each group's chain, in parallel, and report every step.

    ``first``: each group's first launch (its task and role), all started in one call
    (with ``capsule``, when given). Later roles run the same task, as the agent
    ``[returns] agents`` names for the role, else as the group's first agent, in the
    same folder, under the same ``parent_id``. ``sessions``: where the groups' folders
    are read (the orchestrator's store's when not given).
    """
    starts = [item if isinstance(item, ChainStart) else ChainStart(*item) for item in first]
    session = _check(starts)
    agents = agents_by_role(settings)
    handles = await orch.delegate(
        **_first_call(starts, agent_id, cwd),
        parent_id=parent_id,
        capsule=capsule,
        accept=accept,
        roles=[start.launch for start in starts],
    )
    lines: list[str] = []  # appended as steps end, across groups
    chain = _Chain(orch, sessions or orch.store.sessions, settings, agents, parent_id, lines)
    async with asyncio.TaskGroup() as group_tasks:
        tasks = [
            group_tasks.create_task(chain.follow(start, handle))
            for start, handle in zip(starts, handles, strict=True)
        ]
    return ChainReport(
        artifacts_session=session,
        groups=tuple(task.result() for task in tasks),
        lines=tuple(lines),
    )


def _check(starts: Sequence[ChainStart]) -> str:
    """The one artifacts session of the call; groups distinct (two chains in one group
    would overwrite each other's hand-off files)."""
    if not starts:
        raise InvalidRequest("a chain needs at least one group to start")
    sessions = {start.launch.artifacts_session for start in starts}
    if len(sessions) > 1:
        raise InvalidRequest(
            f"a chain's groups share one artifacts session, not {sorted(sessions)}"
        )
    groups = [start.launch.group_id for start in starts]
    if len(set(groups)) < len(groups):
        raise InvalidRequest(f"each chain needs a group of its own; given {groups}")
    return sessions.pop()


class _FirstCall(TypedDict):
    prompt: str | None
    batch: list[dict[str, Any]] | None
    agent_id: str | None
    cwd: str | None


def agents_by_role(settings: Settings) -> dict[AgentRole, str]:
    """``[returns] agents`` by role (short names such as ``qa`` accepted); a key that is
    no role is :class:`InvalidConfig` naming it, before anything starts."""
    agents: dict[AgentRole, str] = {}
    for key, agent in settings.returns.agents.items():
        try:
            agents[role_of(key)] = agent
        except UnknownRole as exc:
            raise InvalidConfig(f"[returns] agents key {key[:80]!r}: {exc.message}") from None
    return agents


def _first_call(starts: Sequence[ChainStart], agent_id: str | None, cwd: str | None) -> _FirstCall:
    """One launch, or a batch: either way one call, checked whole before anything starts."""
    if len(starts) == 1:
        [start] = starts
        return _FirstCall(
            prompt=start.prompt,
            batch=None,
            agent_id=start.agent_id or agent_id,
            cwd=start.cwd or cwd,
        )
    batch = [
        {k: v for k, v in {"prompt": s.prompt, "agent_id": s.agent_id, "cwd": s.cwd}.items() if v}
        for s in starts
    ]
    return _FirstCall(prompt=None, batch=batch, agent_id=agent_id, cwd=cwd)


@dataclass
class _Chain:
    orch: AgentOrchestrator
    sessions: SessionsRepository
    settings: Settings
    agents: dict[AgentRole, str]
    parent_id: str | None
    lines: list[str]

    async def follow(self, start: ChainStart, handle: RunHandle) -> GroupChain:
        """The group's chain from its first run on; always ends with ``chain_ended``."""
        launch = start.launch
        first_agent = handle.agent_id
        steps: list[ChainStep] = []
        reason, error = StopReason.FAILED, ""
        try:
            while True:
                run = await handle.wait()
                recorded = await self.orch.return_step(handle.run_id)
                step = self._step(launch, run, recorded)
                steps.append(step)
                self.lines.append(step.line)
                stop = _stop(run, step)
                if stop is None and len(steps) >= self.settings.returns.max_chain_steps:
                    stop = StopReason.STEP_LIMIT
                if stop is not None:
                    reason = stop
                    break
                assert step.next_role is not None
                cwd = await self._cwd(run)
                launch = RoleLaunch(
                    role=AgentRole(step.next_role),
                    artifacts_session=launch.artifacts_session,
                    group_id=launch.group_id,
                    # the file this step wrote: what a role launched by hand reads too
                    previous=await self.orch.previous_handoff(
                        launch.artifacts_session, launch.group_id
                    ),
                )
                agent = self.agents.get(launch.role, first_agent)
                try:
                    [handle] = await self.orch.delegate(
                        prompt=_next_task(start.prompt, launch, step, len(steps) + 1),
                        agent_id=agent,
                        cwd=cwd,
                        parent_id=self.parent_id,
                        roles=[launch],
                    )
                except DelegateError as exc:
                    reason, error = StopReason.FAILED, f"{launch.role.value}: {exc}"
                    break
        except asyncio.CancelledError:
            reason = StopReason.CANCELLED
            raise
        finally:
            # Shielded: a cancelled chain still says where each group stopped.
            await asyncio.shield(self._ended(launch, handle, steps, reason))
        return GroupChain(launch.group_id, tuple(steps), reason, error)

    def _step(self, launch: RoleLaunch, run: Run, recorded: ReturnStep | None) -> ChainStep:
        if recorded is None:
            # The orchestrator records every role's run; one it could not record (logged
            # there) reaches the primary in the protocol's shape all the same.
            why = "delegate could not record this return"
            answer = rejected(ReturnRule.EMPTY, why, launch.role, 0, run.conversation_id).answer
            return ChainStep(
                role=launch.role,
                status=answer.status,
                summary=answer.summary,
                next_role=None,
                run_id=run.run_id,
                conversation_id=run.conversation_id,
                handoff_file=None,
                line=display_line(launch.group_id, launch.role, answer, None),
            )
        return ChainStep(
            role=recorded.role,
            status=recorded.status,
            summary=tuple(recorded.summary),
            next_role=recorded.next_role,
            run_id=run.run_id,
            conversation_id=run.conversation_id,
            # only a file the step registered: an invalid one may have written none; named
            # from the repository root, as prompts and a single role launch's answer name it
            handoff_file=repo_relative(recorded.handoff_path)
            if recorded.handoff_path and recorded.document_id
            else None,
            line=step_display(recorded),
        )

    async def _cwd(self, run: Run) -> str:
        """The folder the group works in: the one its last run ran in (the first
        launch's folder, resolved by the orchestrator)."""
        session = await self.sessions.get(run.conversation_id)
        return session.cwd

    async def _ended(
        self,
        launch: RoleLaunch,
        handle: RunHandle,
        steps: list[ChainStep],
        reason: StopReason,
    ) -> None:
        await self.orch.emit(
            ChainEnded(
                at=self.orch.clock(),
                conversation_id=handle.conversation_id,
                agent_id=handle.agent_id,
                artifacts_session=launch.artifacts_session,
                group_id=launch.group_id,
                steps=len(steps),
                final_status=steps[-1].status if steps else "",
                reason=reason.value,
            )
        )


def _stop(run: Run, step: ChainStep) -> StopReason | None:
    """Why the group stops after this step, or None when it routes on."""
    if run.status is RunStatus.CANCELLED:
        return StopReason.CANCELLED
    if run.status is not RunStatus.COMPLETED:
        return StopReason.FAILED
    if step.status == INVALID_RETURN:
        return StopReason.INVALID
    if step.next_role is None:
        return StopReason.NO_ROUTE
    if step.next_role == END:
        return StopReason.END
    return None


def _next_task(task: str, launch: RoleLaunch, step: ChainStep, number: int) -> str:
    """The group's task again, and where in its chain the next role comes in."""
    label = ROLE_LABELS[launch.role]
    return (
        f"{task}\n\nStep {number} of group {launch.group_id}'s chain: the"
        f" {ROLE_LABELS[step.role]} returned {step.status}; you continue as the {label}."
    )
