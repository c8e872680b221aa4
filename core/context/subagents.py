"""Per-agent windows (seed 004): a sub-agent's own window, the one-time share of
its parent's instructions, and the note a parent gets when a child is clamped.

Pure logic over models: the orchestrator reads the parent and stores the child.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from core.events import ChildClamped
from core.models import Message, MessageCategory, WindowSource
from core.store.rows import NewMessage

SHARED_CATEGORIES = (MessageCategory.SYSTEM, MessageCategory.CONTEXT)
"""What a child starts with: its parent's instructions and material, never the
dialog or the tool traffic."""
MAX_SHARED_MESSAGES = 200
"""At most this many of the parent's messages are copied (the oldest first)."""


@dataclass(frozen=True, slots=True)
class ChildWindow:
    """A sub-agent's window: its own model's, and whether that is below its parent's."""

    limit_tokens: int
    source: WindowSource
    clamped_from: int | None = None  # the parent's window, when the child's is smaller


def child_window(own_limit: int, own_source: WindowSource, parent_limit: int) -> ChildWindow:
    """The child keeps its own model's window; below a known parent window it is clamped.

    The parent's window never changes: each agent has its own (no shared budget).
    """
    if 0 < own_limit < parent_limit:
        return ChildWindow(own_limit, WindowSource.CLAMP, clamped_from=parent_limit)
    return ChildWindow(own_limit, own_source)


def shared_copies(
    parent_messages: Iterable[Message], new_id: Callable[[], str], at_us: int
) -> list[NewMessage]:
    """Copies of the parent's system and context messages for a new child, in order."""
    return [
        NewMessage(
            new_id(), m.role, m.content, at_us, m.token_count, m.tool, None, category=m.category
        )
        for m in parent_messages
        if m.category in SHARED_CATEGORIES
    ][:MAX_SHARED_MESSAGES]


def shared_instructions(messages: Sequence[Message]) -> str:
    """The shared part as one text, for agents that take it as a system prompt (real CLIs)."""
    return "\n\n".join(m.content for m in messages if m.category in SHARED_CATEGORIES).strip()


def clamp_note(event: ChildClamped) -> str:
    """One line telling a parent that a sub-agent works in a smaller window than its own."""
    return (
        f"[delegate] sub-agent {event.child_id} ({event.child_agent_id}) works in a smaller"
        f" context window than yours: {event.limit_tokens:,} tokens"
        f" (yours: {event.parent_limit_tokens:,}); give it less to read at once."
    )


def with_notes(prompt: str, notes: Sequence[ChildClamped]) -> str:
    """The prompt a parent gets next: the notes recorded since its last run, then the prompt."""
    if not notes:
        return prompt
    return "\n".join(clamp_note(n) for n in notes) + "\n\n" + prompt
