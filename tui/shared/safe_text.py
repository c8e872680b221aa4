"""Show transcript content as text, never as instructions to Rich or the terminal.

Messages come from agents and users: they may hold Rich markup (``[bold]``),
ANSI escape sequences or other control characters. Everything shown passes
through :func:`visible` and is wrapped in ``rich.text.Text`` (no markup parsing).
"""

from __future__ import annotations

from core.event_text.words import first_line as first_line
from core.event_text.words import visible as visible


def clip_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first ``max_lines`` lines and how many more were cut."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines
