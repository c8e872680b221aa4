"""``delegate run --role``: a launch as a role of a task group, and ``--chain``.

Owns what the command line decides for a role's run: its artifacts session (the one
named, else the parent's id, else a new one), the line it prints once the return is
judged, and the chain's lines and exit code (0 only when every group reached the end).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from core.models import Run
from core.orchestrator import AgentOrchestrator
from core.returns.model import ReturnStep, RoleLaunch
from core.runs.handle import RunHandle
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_err, print_json, print_safe
from tui.cli.returns import step_line


async def role_launch(
    orch: AgentOrchestrator,
    role: str,
    group: str,
    artifacts_session: str | None,
    parent: str | None,
) -> RoleLaunch:
    """``delegate run --role``'s launch: the role, its group, the artifacts session (the
    one named, else the parent's id, else a new one) and the group's previous hand-off."""
    from core.errors import ArtifactIdUnsafe
    from core.returns.paths import check_artifact_id, new_artifacts_session
    from core.returns.schemas import role_of

    agent_role = role_of(role)
    group_id = check_artifact_id(group, "group id")
    session = None
    if artifacts_session is not None:
        session = check_artifact_id(artifacts_session, "artifacts session")
    elif parent is not None:
        parent_id = await orch.resolve_id(parent)
        # An imported session's id may not name a folder: a new session then.
        with contextlib.suppress(ArtifactIdUnsafe):
            session = check_artifact_id(parent_id, "artifacts session")
    if session is None:
        session = new_artifacts_session(orch.clock())
    previous = await orch.previous_handoff(session, group_id)
    return RoleLaunch(agent_role, session, group_id, previous)


async def report_role_run(
    orch: AgentOrchestrator,
    handle: RunHandle,
    launch: RoleLaunch,
    run: Run | None,
    *,
    as_json: bool,
) -> int:
    """Print a role's run as the tool answers it (``run`` None: detached, under way):
    its display line on stdout, where its hand-off is on stderr. Exit 1 when invalid."""
    from core.tools import return_payload

    step = await orch.return_step(handle.run_id) if run is not None else None
    payload = return_payload(handle, launch, step)
    if as_json:
        print_json({"status": "ok", **payload})
    elif run is None:
        print(
            f"detached launch run {handle.run_id} in conversation {handle.conversation_id},"
            f" as {launch.role.value} of group {launch.group_id} in artifacts session"
            f" {launch.artifacts_session}"
        )
    else:
        print_safe(_display(launch, payload, step))
        if payload.get("rule"):
            print_err(f"invalid return ({payload['rule']}): {payload.get('reason', '')}")
        elif payload.get("handoff_file"):
            print_err(f"hand-off: {payload['handoff_file']}")
    return EXIT_ERROR if payload.get("rule") else EXIT_OK


def _display(launch: RoleLaunch, payload: dict[str, Any], step: ReturnStep | None) -> str:
    """The run's display line: the step's, or the one its answer makes when none was
    recorded (the tool leaves the line out: the primary has the three lines already)."""
    from core.returns.display import display_line
    from core.returns.model import CompactReturn

    if step is not None:
        return step_line(step)
    answer = payload["return"]  # the protocol's shape: always three lines
    first, second, third = (str(line) for line in answer["summary"])
    compact = CompactReturn(str(answer["status"]), (first, second, third))
    return display_line(launch.group_id, launch.role, compact, None)


async def run_chain(
    orch: AgentOrchestrator, args: argparse.Namespace, launch: RoleLaunch, prompt: str
) -> int:
    """``delegate run --role R --group G --chain``: delegate routes every return to the
    next role (:mod:`core.chains`), one display line per step. Exit 1 unless it ended."""
    from core.capsules.launch import CapsuleAcceptance
    from core.chains.report import StopReason
    from core.chains.runner import ChainStart, run_chains
    from core.supervisor.turn_end import judge_turns

    judge_turns(orch)  # no supervisor may be running: each turn acts on the levels it crosses
    report = await run_chains(
        orch,
        first=[ChainStart(prompt, launch)],
        agent_id=args.agent,
        cwd=args.cwd,
        settings=orch.settings,
        parent_id=args.parent,
        capsule=args.capsule,
        accept=CapsuleAcceptance(allow_secrets=args.allow_secrets, accept_stale=args.accept_stale),
    )
    if args.json:
        print_json(report.payload())
    else:
        for line in report.lines:
            print_safe(line)
        if report.artifacts_session:
            print(f"artifacts session {report.artifacts_session}", file=sys.stderr)
    ended = bool(report.groups) and all(g.reason is StopReason.END for g in report.groups)
    return EXIT_OK if ended else EXIT_ERROR
