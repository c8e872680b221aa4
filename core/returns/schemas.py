"""The hand-off files of seed 002: one pydantic model per role, and reading a role's name.

A role writes everything the next role needs into ``handoff_<role>.json`` before it
answers. The typed keys are checked (the status must be one the role may return,
counts are counts, lists are lists); keys the seed does not name are kept as they
are, so an agent that adds a note of its own loses nothing. The senior software
engineer shares the developer's schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import HandoffFileInvalid, UnknownRole
from core.returns.model import END, ROLE_STATUSES, AgentRole

SHORT_NAMES: Final[dict[str, AgentRole]] = {
    "dev": AgentRole.DEVELOPER,
    "sse": AgentRole.SENIOR_SOFTWARE_ENGINEER,
    "senior": AgentRole.SENIOR_SOFTWARE_ENGINEER,
    "qa": AgentRole.QA_EXPERT,
    "tl": AgentRole.TECH_LEAD,
    "pm": AgentRole.PROJECT_MANAGER,
    "inv": AgentRole.INVESTIGATOR,
    "re": AgentRole.REQUIREMENTS_ENGINEER,
}
"""The seed's short names (``handoff_dev.json``, ``[QA]``), accepted wherever a role is."""

_MAX_SHOWN = 60  # a rejected name is quoted at most this long (it may be anything)
_MAX_PROBLEMS = 5  # a message lists the first few fields at fault, not hundreds


def role_of(value: str) -> AgentRole:
    """The role ``value`` names: its value (``qa_expert``), a short name (``qa``) or its
    words (``QA expert``), any case; else :class:`UnknownRole` listing the roles."""
    key = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    if key in SHORT_NAMES:
        return SHORT_NAMES[key]
    try:
        return AgentRole(key)
    except ValueError:
        pass
    shown = str(value)
    shown = shown if len(shown) <= _MAX_SHOWN else shown[:_MAX_SHOWN] + "…"
    roles = ", ".join(role.value for role in AgentRole)
    shorts = ", ".join(SHORT_NAMES)
    raise UnknownRole(f"unknown role {shown!r}: use one of {roles} (or {shorts})")


def _role_value(value: object) -> object:
    # A role key may be written with a short name; anything else is left for pydantic.
    if isinstance(value, str) and value.strip().lower() != END:
        try:
            return role_of(value)
        except UnknownRole:
            return value
    return value.strip().lower() if isinstance(value, str) else value


class _Open(BaseModel):
    """A part of a hand-off file: its typed keys checked, keys of the agent's own kept."""

    model_config = ConfigDict(extra="allow")


class HandoffFile(_Open):
    """The keys every role's hand-off file has (seed 002, "All Agents - Handoff File")."""

    role: ClassVar[AgentRole]

    from_agent: AgentRole
    status: str
    summary: str = Field(min_length=1)
    to_agent: AgentRole | Literal["end"] | None = None
    timestamp: datetime | None = None
    session_id: str | None = None
    group_id: str | None = None
    artifacts: dict[str, str] = Field(default_factory=dict)

    @field_validator("from_agent", "to_agent", mode="before")
    @classmethod
    def _short_names(cls, value: object) -> object:
        return _role_value(value)

    @field_validator("from_agent", mode="after")
    @classmethod
    def _this_role(cls, value: AgentRole) -> AgentRole:
        if value is not cls.role:
            raise ValueError(f"this is the {cls.role.value}'s file, not the {value.value}'s")
        return value

    @field_validator("status", mode="after")
    @classmethod
    def _role_status(cls, value: str) -> str:
        allowed = ROLE_STATUSES[cls.role]
        if value not in allowed:
            shown = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "…"
            raise ValueError(
                f"{shown!r} is not a {cls.role.value} status (one of {', '.join(allowed)})"
            )
        return value

    @field_validator("summary", mode="before")
    @classmethod
    def _lines_joined(cls, value: object) -> object:
        # The answer's summary is three lines; an agent that writes those into its file
        # too has written a summary all the same.
        if isinstance(value, list) and all(isinstance(line, str) for line in value):
            return "\n".join(value)
        return value

    @field_validator("summary", mode="after")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the summary is blank")
        return value


class DeveloperTests(_Open):
    total: int = Field(default=0, ge=0)
    passing: int = Field(default=0, ge=0)
    failing: int = Field(default=0, ge=0)
    coverage: str | float | None = None  # "92%" or 92


class DeveloperHandoff(HandoffFile):
    """``handoff_developer.json``: what was built, the tests and the branch."""

    role: ClassVar[AgentRole] = AgentRole.DEVELOPER

    files_modified: list[str] = Field(default_factory=list)
    files_created: list[str] = Field(default_factory=list)
    tests: DeveloperTests | None = None
    branch: str | None = None
    concerns: list[str | dict[str, Any]] = Field(default_factory=list)
    tech_debt_logged: bool | None = None


class SeniorHandoff(DeveloperHandoff):
    """``handoff_senior_software_engineer.json``: the developer's schema."""

    role: ClassVar[AgentRole] = AgentRole.SENIOR_SOFTWARE_ENGINEER


class QARun(_Open):
    passed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    duration: str | float | None = None  # "30s" or 30


class QATotals(_Open):
    passed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)


class QAHandoff(HandoffFile):
    """``handoff_qa_expert.json``: the test runs by kind, their totals and the failures."""

    role: ClassVar[AgentRole] = AgentRole.QA_EXPERT

    tests_run: dict[str, QARun] = Field(default_factory=dict)
    total_tests: QATotals | None = None
    challenge_level_reached: int | None = Field(default=None, ge=0)
    quality_assessment: str | None = None
    failures: list[str | dict[str, Any]] = Field(default_factory=list)


class TechLeadHandoff(HandoffFile):
    """``handoff_tech_lead.json``: the review's decision, scores and changes asked for."""

    role: ClassVar[AgentRole] = AgentRole.TECH_LEAD

    decision: Literal["APPROVED", "CHANGES_REQUESTED"] | None = None
    code_quality_score: int | None = Field(default=None, ge=0, le=10)
    security_issues: int | None = Field(default=None, ge=0)
    lint_issues: int | None = Field(default=None, ge=0)
    coverage_acceptable: bool | None = None
    what_was_done_well: list[str | dict[str, Any]] = Field(default_factory=list)
    required_changes: list[str | dict[str, Any]] = Field(default_factory=list)
    suggestions: list[str | dict[str, Any]] = Field(default_factory=list)


class ProjectManagerHandoff(HandoffFile):
    """``handoff_project_manager.json``: which groups are done and what comes next."""

    role: ClassVar[AgentRole] = AgentRole.PROJECT_MANAGER

    groups_completed: list[str] = Field(default_factory=list)
    groups_remaining: list[str] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)


class InvestigatorHandoff(HandoffFile):
    """``handoff_investigator.json``: the root cause, the evidence and the fix proposed."""

    role: ClassVar[AgentRole] = AgentRole.INVESTIGATOR

    root_cause: str | None = None
    files_analyzed: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    solution: str | None = None
    open_questions: list[str] = Field(default_factory=list)


class RequirementsHandoff(HandoffFile):
    """``handoff_requirements_engineer.json``: the requirements and what is still open."""

    role: ClassVar[AgentRole] = AgentRole.REQUIREMENTS_ENGINEER

    requirements: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)


SCHEMAS: Final[dict[AgentRole, type[HandoffFile]]] = {
    schema.role: schema
    for schema in (
        DeveloperHandoff,
        SeniorHandoff,
        QAHandoff,
        TechLeadHandoff,
        ProjectManagerHandoff,
        InvestigatorHandoff,
        RequirementsHandoff,
    )
}


def handoff_schema(role: AgentRole) -> type[HandoffFile]:
    """The model a ``role``'s hand-off file is checked against."""
    return SCHEMAS[role]


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "(the file)"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}"


def validate_handoff(role: AgentRole, data: object, *, where: str) -> HandoffFile:
    """``data`` (a parsed JSON value) as ``role``'s hand-off file.

    Raises :class:`HandoffFileInvalid` naming ``where`` (the file) and each field at
    fault, and what the file must hold; the values themselves are not quoted back
    (they may be anything an agent wrote).
    """
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "null"
        raise HandoffFileInvalid(
            f"{where}: a hand-off file holds one JSON object, not {kind}; write the"
            f" {role.value}'s keys (from_agent, status, summary, ...) in one object"
        )
    schema = handoff_schema(role)
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        errors = error.errors(include_input=False, include_url=False)
        problems = [_problem(item) for item in errors[:_MAX_PROBLEMS]]
        more = len(errors) - len(problems)
        if more > 0:
            problems.append(f"and {more} more")
        raise HandoffFileInvalid(
            f"{where} is not a valid {role.value} hand-off file: {'; '.join(problems)}"
        ) from None


def handoff_example(role: AgentRole) -> dict[str, object]:
    """A filled skeleton of ``role``'s hand-off file, valid against its schema (for prompts)."""
    common: dict[str, object] = {
        "from_agent": role.value,
        "status": ROLE_STATUSES[role][0],
        "summary": "what you did and why, in a few sentences",
    }
    extra: dict[str, object]
    if role in (AgentRole.DEVELOPER, AgentRole.SENIOR_SOFTWARE_ENGINEER):
        extra = {
            "files_modified": ["src/a.py"],
            "files_created": ["tests/test_a.py"],
            "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
            "branch": "feature/x",
            "concerns": [],
            "tech_debt_logged": False,
        }
    elif role is AgentRole.QA_EXPERT:
        extra = {
            "tests_run": {"integration": {"passed": 15, "failed": 0, "duration": "30s"}},
            "total_tests": {"passed": 15, "failed": 0},
            "quality_assessment": "good",
            "failures": [],
        }
    elif role is AgentRole.TECH_LEAD:
        extra = {
            "decision": "APPROVED",
            "code_quality_score": 9,
            "security_issues": 0,
            "lint_issues": 0,
            "coverage_acceptable": True,
            "what_was_done_well": [],
            "required_changes": [],
            "suggestions": [],
        }
    elif role is AgentRole.PROJECT_MANAGER:
        extra = {"groups_completed": ["AUTH"], "groups_remaining": [], "next_steps": []}
    elif role is AgentRole.INVESTIGATOR:
        extra = {
            "root_cause": "one sentence",
            "files_analyzed": ["src/a.py"],
            "evidence": [],
            "solution": "the fix proposed",
        }
    else:
        extra = {"requirements": [], "acceptance_criteria": [], "open_questions": []}
    return {**common, **extra, "artifacts": {}}
