"""How delegate words the small things every event mentions: safe text, ids, counts.

Shared by the panel, the command line and ``delegate watch``. Text from agents and
users may hold control characters: :func:`visible` spells them out, so what is shown
is never an instruction to a terminal.
"""

from __future__ import annotations

import re

from core import one_line

# C0 controls except tab and newline, DEL, and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

ESTIMATE = "≈"
"""Marks a figure that is an estimate (after a compaction)."""


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """Control characters replaced by their ``\\xNN`` spelling; \\r\\n normalised."""
    return _CONTROL.sub(_escape, text.replace("\r\n", "\n"))


def first_line(text: str, width: int = 80) -> str:
    """The first non-blank line, visible and clipped to ``width`` characters."""
    return one_line.clipped(visible(one_line.first_line(text)), width)


def short_id(conversation_id: str) -> str:
    return conversation_id[:8]


def tokens(n: int) -> str:
    """Compact token count: 950, 42k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M"


def count(n: int, word: str) -> str:
    """``1 step``, ``4 steps``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def message_number(seq: int) -> str:
    """``#3``: a stored message's place as the panel numbers messages (#1 is the first;
    ``seq`` counts from 0)."""
    return f"#{max(0, seq) + 1}"


def capsule_label(document_id: str, digest: str | None) -> str:
    """``capsule 1a2b3c4d · digest 9f86d081``: a capsule as one safe phrase (the digest's
    ``sha256:`` prefix dropped; none recorded, none shown)."""
    label = f"capsule {visible(short_id(document_id))}"
    if digest:
        label += f" · digest {visible(digest.removeprefix('sha256:')[:8])}"
    return label


def shown_id(ident: str) -> str:
    """An id cut to its first 8 characters, made visible (``delegate watch``'s ids)."""
    return visible(ident[:8])


PATHS_SHOWN = 3


def paths_shown(paths: tuple[str, ...]) -> str:
    """The first few paths, made visible, and how many more: ``a, b, c (+2)``."""
    shown = ", ".join(visible(path) for path in paths[:PATHS_SHOWN])
    more = len(paths) - PATHS_SHOWN
    return f"{shown} (+{more})" if more > 0 else shown
