"""Planning a run before anything is written: agent and runner, folder, role and capsule.

Owns the checks that refuse a launch or a follow-up without touching the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core import ids
from core.conversations.ids import SessionIds
from core.conversations.sources import CLI_RUNNERS
from core.errors import (
    AgentBusy,
    CwdMissing,
    DelegateError,
    InvalidRequest,
    SessionNotReady,
    UnknownAgent,
)
from core.models import Session, SessionMode, SessionState
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.capsules.launch import CapsuleAcceptance, PreparedCapsule
    from core.returns.launch import PreparedRole
    from core.returns.model import RoleLaunch
    from core.runners.base import Runner


def expand_cwd(cwd: str) -> Path:
    """``cwd`` with ``~`` expanded; an unknown user's home is a missing folder."""
    try:
        return Path(cwd).expanduser()
    except RuntimeError:  # ~nosuchuser
        raise CwdMissing(cwd) from None


def existing_cwd(cwd: str) -> Path:
    """The folder a run starts in, or ``cwd_missing`` naming it."""
    path = expand_cwd(cwd)
    try:
        if not path.is_dir():
            raise CwdMissing(cwd)
        return path.resolve()
    except (OSError, ValueError):  # a name too long for the OS, a NUL, a loop of links
        raise CwdMissing(cwd) from None


@dataclass(frozen=True, slots=True)
class PlannedLaunch:
    """One launch, checked and planned: all that recording and starting it needs.

    ``parent``: the session it is a sub-agent of; ``capsule``: the checked capsule it
    carries; ``role``: its role in a group; ``document``: a hand-off it continues from.
    """

    prompt: str
    agent_id: str
    runner: Runner
    cwd: Path
    mode: SessionMode
    parent: Session | None = None
    capsule: PreparedCapsule | None = None
    role: PreparedRole | None = None
    document: str = ""


class RunPlans(Wing):
    """Which agent, runner and folder a run uses, and what would refuse it."""

    def __init__(self, core: CoreServices, ids: SessionIds) -> None:
        super().__init__(core)
        self.ids = ids

    def runner_for(self, agent_id: str | None) -> tuple[str, Runner]:
        from core.runners import build_runner
        from core.runners.default_agent import default_agent

        agent = agent_id or default_agent(self.settings).agent_id
        config = self.settings.agents.get(agent)
        if config is None:
            raise UnknownAgent(agent, list(self.settings.agents))
        return agent, build_runner(agent, config)

    def check_cwd(self, cwd: str | None) -> Path:
        if not cwd:
            try:
                return Path.cwd()
            except FileNotFoundError:  # the shell's folder was deleted under it
                raise CwdMissing(".") from None
        path = expand_cwd(cwd)
        try:
            not_a_folder = path.exists() and not path.is_dir()
        except (OSError, ValueError):  # _existing_cwd names the problem below
            not_a_folder = False
        if not_a_folder:
            raise InvalidRequest(f"cwd: {cwd!r} is not a directory")
        return existing_cwd(cwd)

    @staticmethod
    def plan_roles(
        roles: Sequence[RoleLaunch] | None, cwds: list[Path]
    ) -> list[PreparedRole | None]:
        """Each launch's role and group paths, ids checked (None: a launch with no role)."""
        from core.returns.launch import plan_role

        if roles is None:
            return [None] * len(cwds)
        return [plan_role(launch, cwd) for launch, cwd in zip(roles, cwds, strict=True)]

    @staticmethod
    async def role_folders(planned: PreparedRole | None) -> PreparedRole | None:
        from core.returns.launch import make_folders

        return await make_folders(planned) if planned is not None else None

    async def capsule_for(
        self, spec: str | None, cwd: Path, accept: CapsuleAcceptance | None
    ) -> PreparedCapsule | None:
        """The capsule a launch in ``cwd`` carries, checked (None: it carries none)."""
        from core.capsules.launch import prepare_capsule

        if spec is None:
            return None
        return await prepare_capsule(
            self.store,
            cwd,
            spec,
            acceptance=accept,
            prompt_ceiling=self.settings.capsule_max_tokens,
        )

    async def check_follow_up(
        self, conversation_id: str, agent_id: str | None
    ) -> tuple[str, Runner, Path]:
        """The agent, runner and folder of a follow-up, checked before anything is written."""
        from core.context.thresholds import exhausted

        session = await self.store.sessions.get(conversation_id)
        refusal = await exhausted(self.store, self.settings, session)
        if refusal is not None:
            raise refusal
        return self.follow_up_plan(session, agent_id)

    def follow_up_plan(self, session: Session, agent_id: str | None) -> tuple[str, Runner, Path]:
        """The agent, runner and folder a follow-up would use; raises what refuses it.

        Checked before anything is written, and without writing: the follow-up
        box asks the same questions through :meth:`follow_up_problem`.
        """
        agent, runner = self.runner_for(agent_id or session.agent_id)
        # An id a CLI could read as an option never reaches one (imported by an older delegate).
        ids.validate_for_runner(self.settings.agents[agent].runner, session.conversation_id)
        # Only an agent CLI runs in the folder; a scripted or HTTP agent (demo
        # sessions) resumes anywhere.
        runs_in_folder = self.settings.agents[agent].runner in CLI_RUNNERS
        cwd = existing_cwd(session.cwd) if runs_in_folder else Path(session.cwd)
        return agent, runner, cwd

    async def follow_up_problem(self, conversation_id: str) -> DelegateError | None:
        """What would refuse a follow-up into ``conversation_id`` now, or None.

        The same typed error ``delegate()`` would raise (``agent_busy``,
        ``session_not_ready``, ``runner_unavailable``, ``cwd_missing``, …), found
        without writing anything, so a front end can say so before the prompt is
        typed. The answer can change by the time the prompt is sent.
        """
        from core.context.thresholds import exhausted

        try:
            # A follow-up goes to the newest session of a hand-off chain: ask about that one.
            named = await self.ids.resolve_id(conversation_id)
            session = await self.store.sessions.get(
                await self.store.sessions.newest_in_chain(named)
            )
            # As the store's claim answers: only idle and ready sessions resume.
            if session.state is SessionState.PENDING:
                return SessionNotReady(session.conversation_id)
            if session.state not in (SessionState.IDLE, SessionState.READY):
                return AgentBusy(session.conversation_id)
            refusal = await exhausted(self.store, self.settings, session)
            if refusal is not None:
                return refusal
            await asyncio.to_thread(self.follow_up_plan, session, None)
        except DelegateError as exc:
            return exc
        return None
