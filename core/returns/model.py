"""The compact-return protocol's vocabulary: roles, their statuses, the minimal return.

A role agent (developer, QA expert, ...) writes everything the next role needs into
a hand-off file and answers only ``{"status": ..., "summary": [three lines]}``. The
primary sees that answer, never the agent's full text: delegate checks it first, and
a return that breaks a rule reaches the primary as ``INVALID_RETURN`` with three
lines delegate writes itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final


class AgentRole(StrEnum):
    """The roles of seed 002; the value is the ``{agent}`` of ``handoff_{agent}.json``."""

    DEVELOPER = "developer"
    SENIOR_SOFTWARE_ENGINEER = "senior_software_engineer"
    QA_EXPERT = "qa_expert"
    TECH_LEAD = "tech_lead"
    PROJECT_MANAGER = "project_manager"
    INVESTIGATOR = "investigator"
    REQUIREMENTS_ENGINEER = "requirements_engineer"


ROLE_STATUSES: Final[dict[AgentRole, tuple[str, ...]]] = {
    AgentRole.DEVELOPER: ("READY_FOR_QA", "READY_FOR_REVIEW", "BLOCKED", "ESCALATE_SENIOR"),
    AgentRole.SENIOR_SOFTWARE_ENGINEER: (
        "READY_FOR_QA",
        "READY_FOR_REVIEW",
        "BLOCKED",
        "ESCALATE_SENIOR",
    ),
    AgentRole.QA_EXPERT: ("PASS", "FAIL", "BLOCKED", "FLAKY"),
    AgentRole.TECH_LEAD: (
        "APPROVED",
        "CHANGES_REQUESTED",
        "ESCALATE_TO_OPUS",
        "SPAWN_INVESTIGATOR",
    ),
    AgentRole.PROJECT_MANAGER: ("BAZINGA", "CONTINUE", "BLOCKED"),
    AgentRole.INVESTIGATOR: ("ROOT_CAUSE_FOUND", "NEED_MORE_INFO", "BLOCKED"),
    AgentRole.REQUIREMENTS_ENGINEER: ("REQUIREMENTS_READY", "NEEDS_CLARIFICATION", "BLOCKED"),
}
"""The statuses each role may return (the seed's enums; the PM's ends a chain)."""

ROLE_LABELS: Final[dict[AgentRole, str]] = {
    AgentRole.DEVELOPER: "Developer",
    AgentRole.SENIOR_SOFTWARE_ENGINEER: "SSE",
    AgentRole.QA_EXPERT: "QA",
    AgentRole.TECH_LEAD: "TL",
    AgentRole.PROJECT_MANAGER: "PM",
    AgentRole.INVESTIGATOR: "Investigator",
    AgentRole.REQUIREMENTS_ENGINEER: "RE",
}
"""The ``[{agent}]`` of the display line (the seed's short names)."""

INVALID_RETURN: Final = "INVALID_RETURN"
"""The status delegate answers in place of a return that broke the protocol."""

END: Final = "end"
"""The routing target that ends a group's chain (BAZINGA routes here)."""

SUMMARY_LINES: Final = 3


class ReturnRule(StrEnum):
    """Which rule a final message broke (stable: tool responses and history carry it)."""

    NOT_JSON = "not_json"  # no JSON object found at all
    VERBOSE = "verbose"  # text outside the JSON (or its one fenced block)
    TWO_OBJECTS = "two_objects"  # more than one JSON object
    SHAPE = "shape"  # not {"status": str, "summary": [str, ...]} (missing or extra keys)
    STATUS = "status"  # a status the role may not return
    SUMMARY_LINES = "summary_lines"  # not exactly three non-empty one-line strings
    TOO_LONG = "too_long"  # over the return token budget
    EMPTY = "empty"  # the run ended with no final message (failed, cancelled)
    NO_HANDOFF = "no_handoff"  # routes on, but its hand-off file is missing or invalid


@dataclass(frozen=True, slots=True)
class CompactReturn:
    """What the primary receives for one role's run."""

    status: str
    summary: tuple[str, str, str]

    def payload(self) -> dict[str, object]:
        return {"status": self.status, "summary": list(self.summary)}


@dataclass(frozen=True, slots=True)
class ParsedReturn:
    """A final message, judged: ``answer`` is what the primary gets either way.

    Valid: ``answer`` is the agent's own return and ``rule`` is None. Invalid:
    ``answer`` has status INVALID_RETURN and three lines delegate wrote from what
    it found; ``rule`` and ``reason`` say what was wrong. ``tokens`` counts the
    agent's whole final message (tiktoken).
    """

    answer: CompactReturn
    tokens: int
    rule: ReturnRule | None = None
    reason: str = ""

    @property
    def valid(self) -> bool:
        return self.rule is None


@dataclass(frozen=True, slots=True)
class RoleLaunch:
    """A launch as one role of a group: its prompt gets the protocol sections, its final
    message is judged and recorded as a :class:`ReturnStep`."""

    role: AgentRole
    artifacts_session: str
    group_id: str
    previous: tuple[AgentRole, str] | None = None  # the prior role and its hand-off file


@dataclass(frozen=True, slots=True)
class ReturnStep:
    """One role's run in a group's chain, as the store keeps it."""

    step_id: str
    artifacts_session: str
    group_id: str
    role: AgentRole
    seq: int  # 1, 2, ... within the group
    status: str  # the role's status, or INVALID_RETURN
    summary: tuple[str, ...]
    created_us: int
    run_id: str | None = None
    conversation_id: str | None = None
    document_id: str | None = None  # the hand-off file's registry row
    handoff_path: str | None = None
    next_role: str | None = None  # an AgentRole value, END, or None (no route)
    rule: str | None = None  # a ReturnRule value when the return was invalid
    reason: str = ""
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class ReturnSession:
    """One artifacts session as the steps describe it.

    A group has ended when its last step routes nowhere on (the end, no route, or
    an invalid return); ``running`` counts the groups whose last step names a next role.
    """

    artifacts_session: str
    groups: int
    steps: int
    running: int
    last_at: datetime

    @property
    def ended(self) -> bool:
        return self.running == 0
