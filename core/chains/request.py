"""``delegate_agent`` with ``"chain": true``: the request's launches become chains.

The tool has checked the request and planned each group's first role (its artifacts
session, group and any previous hand-off); this runs the chains and answers the
report: one display line per step and each step's ids, never an agent's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.capsules.launch import CapsuleAcceptance
from core.chains.runner import ChainStart, run_chains
from core.errors import InvalidRequest
from core.models import AgentRequest, SessionMode
from core.orchestrator import AgentOrchestrator
from core.returns.model import RoleLaunch


async def chain_request(
    orch: AgentOrchestrator, request: AgentRequest, launches: Sequence[RoleLaunch]
) -> dict[str, Any]:
    """Run a chain per launch (the single launch, or one per batch item, in order)."""
    if request.mode is SessionMode.DETACHED:
        # A chain waits for each role's return to launch the next one: it is the
        # caller's call that waits, so there is nothing to hand to a worker and leave.
        raise InvalidRequest(
            "chain: delegate waits for each role to start the next; use mode standard"
            " (or launch each role detached, with its group_id and artifacts_session)"
        )
    if request.batch is not None:
        starts = [
            ChainStart(item.prompt, launch, item.agent_id, item.cwd)
            for item, launch in zip(request.batch, launches, strict=True)
        ]
    else:
        assert request.prompt is not None
        [launch] = launches
        starts = [ChainStart(request.prompt, launch)]
    report = await run_chains(
        orch,
        first=starts,
        agent_id=request.agent_id,
        cwd=request.cwd,
        settings=orch.settings,
        parent_id=request.parent_id,
        capsule=request.capsule,
        accept=CapsuleAcceptance(
            allow_secrets=request.allow_secrets, accept_stale=request.accept_stale
        ),
    )
    return report.payload()
