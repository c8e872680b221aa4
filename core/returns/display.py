"""The display line of one compact return (seed 002's "Orchestrator Summary Display").

``🔨 Group AUTH [Developer] | line 1 | line 2 | line 3 → QA Expert``: what a person
and the primary see for each step. Everything in it came from an agent or a tool
call, so each part is flattened to one line of printable text first: a newline,
a terminal escape or a bidirectional override in a summary cannot break the line
or rewrite what is on the screen around it.
"""

from __future__ import annotations

import re
from typing import Final

from core.returns.model import (
    END,
    INVALID_RETURN,
    ROLE_LABELS,
    AgentRole,
    CompactReturn,
    ReturnStep,
)

ROLE_NAMES: Final[dict[AgentRole, str]] = {
    AgentRole.DEVELOPER: "Developer",
    AgentRole.SENIOR_SOFTWARE_ENGINEER: "Senior Software Engineer",
    AgentRole.QA_EXPERT: "QA Expert",
    AgentRole.TECH_LEAD: "Tech Lead",
    AgentRole.PROJECT_MANAGER: "Project Manager",
    AgentRole.INVESTIGATOR: "Investigator",
    AgentRole.REQUIREMENTS_ENGINEER: "Requirements Engineer",
}
"""A role's full name: the ``→ {next}`` of the display line, and prompts."""

ROLE_EMOJI: Final[dict[AgentRole, str]] = {
    AgentRole.DEVELOPER: "🔨",
    AgentRole.SENIOR_SOFTWARE_ENGINEER: "🧠",
    AgentRole.QA_EXPERT: "🧪",
    AgentRole.TECH_LEAD: "👔",
    AgentRole.PROJECT_MANAGER: "📋",
    AgentRole.INVESTIGATOR: "🔍",
    AgentRole.REQUIREMENTS_ENGINEER: "📝",
}
STATUS_EMOJI: Final[dict[str, str]] = {
    "PASS": "✅",
    "FAIL": "❌",
    "BAZINGA": "🎉",
    INVALID_RETURN: "⛔",
}
"""A status whose outcome matters more than who returned it (seed: ``✅ Group AUTH [QA]``)."""

STOP: Final = "stop"
MAX_PART_CHARS: Final = 300
"""One part of the line is cut here (a valid return is short; a stored one may not be)."""

# Control characters (C0, DEL, C1), line and paragraph separators, bidirectional
# controls, zero-width joiners and the BOM, and lone surrogates (not printable text).
_UNPRINTABLE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]+"
)
_SPACES: Final = re.compile(r"\s+")


def one_line(text: str, limit: int = MAX_PART_CHARS) -> str:
    """``text`` as one line of printable text: control characters and line breaks become
    spaces, runs of spaces one, and past ``limit`` characters it is cut with ``…``."""
    flat = _SPACES.sub(" ", _UNPRINTABLE.sub(" ", text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def next_name(next_role: AgentRole | str | None) -> str:
    """The ``→`` target: the next role's full name, ``end``, or ``stop`` (no route)."""
    if next_role is None:
        return STOP
    if next_role == END:
        return END
    try:
        return ROLE_NAMES[AgentRole(next_role)]
    except ValueError:
        return one_line(str(next_role), 40)


NO_HANDOFF: Final = "no hand-off file"
HANDOFF_REMOVED: Final = "no hand-off file (removed since it was written)"


def missing_handoff(step: ReturnStep) -> str:
    """What a step whose hand-off file is not there says instead of a path: it wrote none
    (a final step needs none), or it was registered and has been removed since."""
    return HANDOFF_REMOVED if step.document_id is not None else NO_HANDOFF


def display_line(
    group_id: str,
    role: AgentRole,
    answer: CompactReturn,
    next_role: AgentRole | str | None,
) -> str:
    """One step as one line: ``{emoji} Group {id} [{label}] | l1 | l2 | l3 → {next}``.

    An invalid return (status ``INVALID_RETURN``) always shows ``→ stop``: nothing
    is launched after it.
    """
    emoji = STATUS_EMOJI.get(answer.status) or ROLE_EMOJI[role]
    lines = " | ".join(one_line(line) for line in answer.summary)
    target = STOP if answer.status == INVALID_RETURN else next_name(next_role)
    return f"{emoji} Group {one_line(group_id, 80)} [{ROLE_LABELS[role]}] | {lines} → {target}"
