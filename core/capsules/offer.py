"""Offering a capsule at a launch (seed 000's launcher: "if omitted, it offers to create
one"): when a parent holds context worth carrying, what to say, and which marker a
capsule may name as its source session.

The rule is documented in docs/capsules.md: a parent is worth a capsule once it has done
``MIN_TURNS`` turns, or holds ``MIN_CONTEXT_TOKENS`` tokens of context (when known).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from core.capsules.storage import list_capsules
from core.gitinfo import current_branch, worktree_root
from core.models import Session

MIN_TURNS = 3
"""Turns after which a session has worked out something a sub-agent would lack."""
MIN_CONTEXT_TOKENS = 8_000
"""Context (tokens in use) after which a session is worth distilling, whatever its turns."""
MAX_MARKER_CHARS = 200
"""The longest source-session marker a capsule names (one front-matter line)."""


def worth_a_capsule(parent: Session) -> bool:
    """Whether ``parent`` holds context a sub-agent would miss without a capsule."""
    context = parent.context
    return parent.metrics.turns >= MIN_TURNS or (
        context.known and context.used_tokens >= MIN_CONTEXT_TOKENS
    )


def latest_capsule(cwd: Path) -> Path | None:
    """The newest capsule of the branch ``cwd`` is on (None: none, or no repository)."""
    repo = worktree_root(cwd)
    if repo is None:
        return None
    found = list_capsules(repo, current_branch(cwd) or "HEAD")
    return found[0] if found else None


def holds(parent: Session) -> str:
    """``7 turns and 42,000 tokens of context`` (the tokens only when known)."""
    turns = f"{parent.metrics.turns} turn{'s' if parent.metrics.turns != 1 else ''}"
    if parent.context.known and parent.context.used_tokens > 0:
        return f"{turns} and {parent.context.used_tokens:,} tokens of context"
    return turns


def capsule_hint(parent: Session, short_id: str, latest: Path | None) -> str:
    """One line saying how to carry the parent's context into a launch without a capsule."""
    start = f"hint: parent {short_id} holds {holds(parent)} and this launch carries no capsule:"
    if latest is not None:
        return (
            f"{start} add --capsule latest ({latest.name}) to carry it, or write a fresh one"
            f" with `delegate capsule request {short_id}`"
        )
    return (
        f"{start} write one with `delegate capsule request {short_id}`, then launch with"
        " --capsule latest"
    )


def marker_problem(marker: str) -> str | None:
    """Why ``marker`` cannot name a capsule's source session (None: it can).

    Any text the seed's ``source_session`` allows (a session id, a dated marker such as
    ``20251023-171812-bc1df3``): one line of printable characters, no surrounding
    spaces, at most ``MAX_MARKER_CHARS``.
    """
    if not marker.strip():
        return "a source-session marker cannot be blank"
    if marker != marker.strip():
        return f"a source-session marker has no leading or trailing spaces: {marker!r}"
    if len(marker) > MAX_MARKER_CHARS:
        return f"a source-session marker is at most {MAX_MARKER_CHARS} characters"
    if any(unicodedata.category(c)[0] == "C" for c in marker):
        return f"a source-session marker is one line of printable characters: {marker!r}"
    return None
