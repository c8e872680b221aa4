"""Show transcript content as text, never as instructions to Rich or the terminal.

Messages come from agents and users: they may hold Rich markup (``[bold]``),
ANSI escape sequences or other control characters. Everything shown passes
through :func:`visible` and is wrapped in ``rich.text.Text`` (no markup parsing).
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """Control characters replaced by their ``\\xNN`` spelling; \\r\\n normalised."""
    return _CONTROL.sub(_escape, text.replace("\r\n", "\n"))


def clip_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first ``max_lines`` lines and how many more were cut."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines


def first_line(text: str, width: int = 80) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = visible(line)
    return line if len(line) <= width else line[: width - 1] + "…"
