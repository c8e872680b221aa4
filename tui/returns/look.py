"""How compact returns read in the panel: role names, status colours, why a chain ended.

Shared by the history cells, the group view and ``delegate watch``. Every value
comes from the store or an event (data, not promises): an unknown role or status
reads as itself, made visible, never as an error.
"""

from __future__ import annotations

from typing import Final

from core.events import ReturnAccepted
from core.returns import display
from core.returns.display import ROLE_NAMES
from core.returns.model import INVALID_RETURN, ROLE_LABELS, SUMMARY_LINES, AgentRole, CompactReturn
from tui.shared.safe_text import visible

CHAIN: Final[tuple[AgentRole, ...]] = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)
"""The cycle the group view lays a chain along (the seed's developer → QA → TL → PM)."""

# Statuses that move the chain forward, send it back, or stop it for a person.
_FORWARD = frozenset(
    {"READY_FOR_QA", "READY_FOR_REVIEW", "PASS", "APPROVED", "ROOT_CAUSE_FOUND"}
    | {"REQUIREMENTS_READY"}
)
_BACK = frozenset(
    {"FAIL", "CHANGES_REQUESTED", "FLAKY", "CONTINUE", "NEED_MORE_INFO", "NEEDS_CLARIFICATION"}
)
_ESCALATE = frozenset({"BLOCKED", "ESCALATE_SENIOR", "ESCALATE_TO_OPUS", "SPAWN_INVESTIGATOR"})

CHAIN_REASONS: Final[dict[str, str]] = {
    "end": "reached the end",
    "invalid": "a return broke the protocol",
    "no_route": "no route for its status",
    "step_limit": "the step limit was reached",
    "failed": "a run failed",
    "cancelled": "cancelled",
}
"""Why a chain stopped (``ChainEnded.reason``), in a person's words."""

RULES: Final[dict[str, str]] = {
    "not_json": "no JSON return",
    "verbose": "text around the JSON",
    "two_objects": "more than one JSON object",
    "shape": "not {status, summary}",
    "status": "a status the role may not return",
    "summary_lines": "not three summary lines",
    "too_long": "over the token budget",
    "empty": "no final message",
    "no_handoff": "no valid hand-off file",
}
"""Which rule a return broke (``ReturnRule`` values), in a person's words."""


def role_of(value: str) -> AgentRole | None:
    try:
        return AgentRole(value)
    except ValueError:
        return None


def role_label(value: str) -> str:
    """The display line's short name (``QA``), or the value itself, made visible."""
    role = role_of(value)
    return ROLE_LABELS[role] if role is not None else one_line(value)


def role_name(value: str) -> str:
    """The full name (``QA Expert``), or the value itself, made visible."""
    role = role_of(value)
    return ROLE_NAMES[role] if role is not None else one_line(value)


def next_name(next_role: str | None) -> str:
    """Where a step routes: a role's full name, ``end``, or ``stop`` (no route)."""
    return visible(display.next_name(next_role))


def status_style(status: str) -> str:
    """The colour of a status: forward green, back yellow, escalations magenta,
    an invalid return red, the end bold green."""
    if status == INVALID_RETURN:
        return "bold red"
    if status == "BAZINGA":
        return "bold green"
    if status in _FORWARD:
        return "green"
    if status in _BACK:
        return "yellow"
    if status in _ESCALATE:
        return "magenta"
    return ""


def chain_reason(reason: str) -> str:
    return CHAIN_REASONS.get(reason, one_line(reason))


def rule_words(rule: str) -> str:
    """``verbose (text around the JSON)``: the stable rule id and what it means."""
    words = RULES.get(rule)
    return f"{one_line(rule)} ({words})" if words else one_line(rule)


def count(n: int, word: str) -> str:
    """``1 step``, ``4 steps``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def one_line(text: str) -> str:
    """One line of printable text (newlines, escapes, bidirectional controls flattened)."""
    return visible(display.one_line(text))


def accepted_line(event: ReturnAccepted) -> str:
    """The display line of a valid return, one safe line (built from its parts, as core
    builds it, when an event carries none)."""
    if event.display:
        return one_line(event.display)
    role = role_of(event.role)
    if role is not None and len(event.summary) == SUMMARY_LINES:
        summary = (event.summary[0], event.summary[1], event.summary[2])
        answer = CompactReturn(status=event.status, summary=summary)
        return one_line(display.display_line(event.group_id, role, answer, event.next_role))
    lines = " | ".join(one_line(line) for line in event.summary)
    group = one_line(event.group_id)
    return f"Group {group} [{role_label(event.role)}] | {lines} → {next_name(event.next_role)}"
