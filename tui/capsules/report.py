"""What the capsule editor shows beside the text: outline, token meter, problems.

Computed off the event loop (the editor checks in a worker thread) because counting
tokens and checking drift read files and git. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.capsules.model import DEFAULT_BUDGET, DEFAULT_PROMPT_CEILING
from core.documents.problems import Problem

NEAR_SHARE = 0.8
"""The meter turns amber once the body uses this share of its budget."""

MeterLevel = Literal["ok", "near", "over"]


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A level-1 heading and its 1-based line."""

    title: str
    line: int


@dataclass(frozen=True, slots=True)
class CapsuleReport:
    """One check of the text: its problems (sorted by line), the body's tokens against
    the budget, and the outline."""

    problems: tuple[Problem, ...] = ()
    tokens: int = 0
    budget: int = DEFAULT_BUDGET
    ceiling: int = DEFAULT_PROMPT_CEILING
    outline: tuple[OutlineEntry, ...] = ()

    @property
    def level(self) -> MeterLevel:
        if self.tokens > self.budget:
            return "over"
        if self.tokens >= NEAR_SHARE * self.budget:
            return "near"
        return "ok"


def front_matter_end(lines: list[str]) -> int:
    """The index of the line after the front matter's closing ``---`` (0: none)."""
    if not lines or lines[0].rstrip("\r\n") != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            return index + 1
    return 0


def outline_of(text: str) -> tuple[OutlineEntry, ...]:
    """Every level-1 heading after the front matter (outside fenced code), with its line.

    Read from the text itself, not a parse, so the outline keeps working while the
    front matter is half typed.
    """
    lines = text.splitlines()
    entries: list[OutlineEntry] = []
    fenced = False
    for index in range(front_matter_end(lines), len(lines)):
        line = lines[index]
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            entries.append(OutlineEntry(line[2:].strip(), index + 1))
    return tuple(entries)
