"""Launching a role and judging its return: what the orchestrator does around a role's run.

Before anything starts, each launch's group folders are made (ids checked, only real
folders) and its first prompt gets the protocol sections. When the run ends, its final
message is judged (the minimal JSON, the role's statuses, three lines, the token
budget), routed, and recorded as the group's next step with its hand-off file; what
the primary then receives is the step's compact return, never the full text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from core.documents.safe_files import DELEGATE_DIR
from core.errors import InvalidRequest
from core.events import ReturnAccepted, ReturnRejected
from core.models import Run, RunStatus
from core.returns.display import display_line
from core.returns.model import CompactReturn, ParsedReturn, ReturnRule, ReturnStep, RoleLaunch
from core.returns.parse import parse_return, rejected
from core.returns.paths import ARTIFACTS_DIR, GroupPaths, ensure, group_paths
from core.returns.prompt import role_prompt
from core.returns.registry import record_return
from core.returns.routing import Routes
from core.store import Store


@dataclass(frozen=True, slots=True)
class PreparedRole:
    """A role launch whose ids were checked and whose group folders exist."""

    launch: RoleLaunch
    paths: GroupPaths

    def first_prompt(self, task: str) -> str:
        """The prompt the role starts with: prior hand-off, the task, the protocol."""
        return role_prompt(task, self.launch, self.paths)


def check_roles(roles: Sequence[RoleLaunch], launches: int) -> None:
    """One role per launch, and no two launches for one role of one group."""
    if len(roles) != launches:
        raise InvalidRequest(
            f"roles: {len(roles)} given for {launches} launch(es); give one per launch"
        )
    seen: set[tuple[str, str, str]] = set()
    for launch in roles:
        key = (launch.artifacts_session, launch.group_id, launch.role.value)
        if key in seen:
            raise InvalidRequest(
                f"group_id: {launch.group_id!r} appears twice for the {launch.role.value}"
                f" of artifacts session {launch.artifacts_session!r}; give each launch its"
                " own group"
            )
        seen.add(key)


def plan_role(launch: RoleLaunch, cwd: Path) -> PreparedRole:
    """The launch's group paths in the repository of ``cwd``, its ids checked
    (:class:`~core.errors.ArtifactIdUnsafe`); nothing is created yet."""
    return PreparedRole(launch, group_paths(cwd, launch.artifacts_session, launch.group_id))


async def make_folders(prepared: PreparedRole) -> PreparedRole:
    """Create the group's folders, each a real folder, before its role starts."""
    await asyncio.to_thread(ensure, prepared.paths)
    return prepared


def judge(
    prepared: PreparedRole,
    final_message: str,
    run: Run,
    *,
    max_tokens: int,
) -> ParsedReturn:
    """The run's final message judged; a run that did not complete returned nothing."""
    role = prepared.launch.role
    if run.status is not RunStatus.COMPLETED:
        why = f"the run {run.status.value}" + (f": {run.error}" if run.error else "")
        return rejected(
            ReturnRule.EMPTY, why, role, 0, run.conversation_id, found="no final message"
        )
    return parse_return(
        final_message, role, max_tokens=max_tokens, conversation_id=run.conversation_id
    )


async def record_judged(
    store: Store,
    prepared: PreparedRole,
    parsed: ParsedReturn,
    run: Run,
    *,
    routes: Routes,
    now: datetime,
) -> ReturnStep:
    """Route a judged return and record it as the group's next step (with its hand-off
    file); a return routing on without a valid hand-off file is recorded invalid."""
    launch = prepared.launch
    next_role = routes.next_role(launch.role, parsed.answer.status) if parsed.valid else None
    return await record_return(
        store,
        paths=prepared.paths,
        launch=launch,
        parsed=parsed,
        next_role=next_role,
        run_id=run.run_id,
        conversation_id=run.conversation_id,
        now=now,
    )


def repo_relative(handoff_path: str) -> str:
    """A recorded hand-off path as prompts name it: from ``.delegate/artifacts/`` on,
    relative to the repository root (the layout fixes where that starts)."""
    parts = PurePosixPath(handoff_path).parts
    for start in range(len(parts) - 2, -1, -1):
        if parts[start : start + 2] == (DELEGATE_DIR, ARTIFACTS_DIR):
            return "/".join(parts[start:])
    return handoff_path


def step_display(step: ReturnStep) -> str:
    """The step's display line (``→ stop`` for an invalid return or no route)."""
    answer = CompactReturn(step.status, _three(step.summary))
    return display_line(step.group_id, step.role, answer, step.next_role)


def _three(summary: Sequence[str]) -> tuple[str, str, str]:
    lines = [*summary, "", "", ""][:3]
    return lines[0], lines[1], lines[2]


def return_event(step: ReturnStep, agent_id: str, at: datetime) -> ReturnAccepted | ReturnRejected:
    """The history event a recorded step makes."""
    common = {
        "at": at,
        "conversation_id": step.conversation_id or "",
        "run_id": step.run_id or "",
        "agent_id": agent_id,
        "artifacts_session": step.artifacts_session,
        "group_id": step.group_id,
        "role": step.role.value,
        "tokens": step.tokens,
    }
    if step.rule is not None:
        return ReturnRejected(**common, rule=step.rule, reason=step.reason)
    return ReturnAccepted(
        **common,
        status=step.status,
        summary=step.summary,
        next_role=step.next_role,
        handoff_path=step.handoff_path,
        display=step_display(step),
    )
