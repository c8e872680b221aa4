"""What a chain run answers: each group's steps, why it stopped, one display line per step.

The primary reads this instead of its delegates' replies: each step is its role's
compact return (status, three lines) and the ids to look further (the run, the
session, the hand-off file). No agent's full text is ever part of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.returns.model import AgentRole


class StopReason(StrEnum):
    """Why a group's chain stopped (``ChainEnded.reason``)."""

    END = "end"  # a return routed to the end (BAZINGA)
    INVALID = "invalid"  # a return broke the protocol: delegate does not guess a route
    NO_ROUTE = "no_route"  # the routing table has no next role for that status
    STEP_LIMIT = "step_limit"  # ``[returns] max_chain_steps`` reached
    FAILED = "failed"  # a run failed, or the next role could not be launched
    CANCELLED = "cancelled"  # a run was cancelled, or the chain itself


@dataclass(frozen=True, slots=True)
class ChainStep:
    """One role's run in a group's chain, as the primary sees it."""

    role: AgentRole
    status: str  # the role's status, or INVALID_RETURN
    summary: tuple[str, ...]
    next_role: str | None  # a role, "end", or None (no route, or the return was invalid)
    run_id: str | None
    conversation_id: str | None
    handoff_file: str | None  # repo-relative, when the step wrote a valid one
    line: str  # its display line

    def payload(self) -> dict[str, Any]:
        return {
            "role": self.role.value,
            "status": self.status,
            "summary": list(self.summary),
            "next_role": self.next_role,
            "run_id": self.run_id,
            "conversation_id": self.conversation_id,
            "handoff_file": self.handoff_file,
        }


@dataclass(frozen=True, slots=True)
class GroupChain:
    """A group's chain from its first role to where it stopped."""

    group_id: str
    steps: tuple[ChainStep, ...]
    reason: StopReason
    error: str = ""  # why the next role could not be launched (a refused launch's message)

    @property
    def final_status(self) -> str:
        return self.steps[-1].status if self.steps else ""

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "group_id": self.group_id,
            "steps": [step.payload() for step in self.steps],
            "final_status": self.final_status,
            "reason": self.reason.value,
        }
        if self.error:
            body["error"] = self.error
        return body


@dataclass(frozen=True, slots=True)
class ChainReport:
    """Every group's chain of one call, and the display lines in the order steps ended."""

    artifacts_session: str
    groups: tuple[GroupChain, ...]
    lines: tuple[str, ...]

    def payload(self) -> dict[str, Any]:
        """The ``delegate_agent`` response for ``"chain": true``."""
        return {
            "status": "ok",
            "artifacts_session": self.artifacts_session,
            "groups": [group.payload() for group in self.groups],
            "lines": list(self.lines),
        }
