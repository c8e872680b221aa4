"""How compact returns read in the panel: role names, status colours, why a chain ended.

Shared by the history cells, the group view and ``delegate watch``. Every value
comes from the store or an event (data, not promises): an unknown role or status
reads as itself, made visible, never as an error.
"""

from __future__ import annotations

from typing import Final

from core.event_text.return_words import CHAIN_REASONS as CHAIN_REASONS
from core.event_text.return_words import RULES as RULES
from core.event_text.return_words import accepted_line as accepted_line
from core.event_text.return_words import chain_reason as chain_reason
from core.event_text.return_words import next_name as next_name
from core.event_text.return_words import one_line as one_line
from core.event_text.return_words import role_label as role_label
from core.event_text.return_words import role_of as role_of
from core.event_text.return_words import rule_words as rule_words
from core.event_text.return_words import status_style as status_style
from core.event_text.words import count as count
from core.returns.display import ROLE_NAMES
from core.returns.model import AgentRole

CHAIN: Final[tuple[AgentRole, ...]] = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)
"""The cycle the group view lays a chain along (the seed's developer → QA → TL → PM)."""


def role_name(value: str) -> str:
    """The full name (``QA Expert``), or the value itself, made visible."""
    role = role_of(value)
    return ROLE_NAMES[role] if role is not None else one_line(value)
