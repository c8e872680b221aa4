"""A text shown on one line: its first non-blank line, clipped with an ellipsis.

Standard library only: the import's worker processes title sessions with it.
"""

from __future__ import annotations


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank, stripped ("" when there is none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def clipped(text: str, limit: int) -> str:
    """``text`` as it is when it fits in ``limit`` characters, else cut to end in ``…``."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line_clipped(text: str, limit: int) -> str:
    """:func:`first_line`, :func:`clipped` to ``limit`` characters."""
    return clipped(first_line(text), limit)
