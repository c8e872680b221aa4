"""The capsule envelope: front matter, the fixed outline, and what a parse keeps.

A capsule is Markdown with a front-matter block (seed 000 "Capsule Structure"), then
level-1 sections in a fixed order. The model keeps every byte a person wrote (prose
before the first section, extra lines inside sections), so rendering a parsed capsule
gives back the same text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SECTIONS: tuple[str, ...] = (
    "Mission Snapshot",
    "Key Decisions & Rationale",
    "Active Workstreams",
    "Pending Actions",
    "Knowledge Base",
    "Risks & Watchpoints",
    "Transcript Highlights",
    "Exploratory Threads & User Preferences",
)
"""The full outline, in the order a capsule must keep."""

MINI_SECTIONS: tuple[str, ...] = ("Mission Snapshot", "Pending Actions", "Knowledge Base")
"""A miniature capsule's outline (small tasks; the seed's open question)."""

DEFAULT_BUDGET = 1_200
"""Tokens a full capsule's body may use unless its front matter says otherwise."""
MINI_BUDGET = 300
"""Tokens a miniature capsule's body may use."""
DEFAULT_PROMPT_CEILING = 5_000
"""A sub-agent's prompt ceiling (config ``capsule_max_tokens``); a body over 80% of it is
a problem, whatever its own budget says."""
CEILING_SHARE = 0.8
MAX_HIGHLIGHTS = 5
"""Transcript highlights a capsule may keep (each with a timestamp, message or commit)."""

FRONT_MATTER_KEYS: tuple[str, ...] = (
    "branch",
    "source_session",
    "created_at",
    "primary_objective",
    "token_budget",
    "version",
    "template",
    "references",
)
"""Known keys, in the order they are rendered; ``template`` and ``references`` optional."""

Template = Literal["full", "mini"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Reference(_Frozen):
    """A file the capsule relies on, with its git blob id when the capsule was written
    (None: not tracked, or not in a git repository)."""

    path: str  # relative to the repository root, POSIX separators
    blob: str | None = None


class FrontMatter(_Frozen):
    branch: str
    source_session: str
    created_at: datetime  # UTC
    primary_objective: str
    token_budget: int = Field(default=DEFAULT_BUDGET, gt=0)
    version: str = "0.1"
    template: Template = "full"
    references: tuple[Reference, ...] = ()

    @property
    def outline(self) -> tuple[str, ...]:
        return MINI_SECTIONS if self.template == "mini" else SECTIONS


class Section(_Frozen):
    """A level-1 section: its title as written and its body verbatim (every line after
    the heading up to the next level-1 heading, newlines included)."""

    title: str
    body: str
    line: int  # 1-based line of the heading in the text it was parsed from (0: built)


class Capsule(_Frozen):
    """A parsed (or built) capsule. ``front_matter_text`` is the block as written (None
    when built in code: rendered from ``front``); ``preamble`` the text between the front
    matter and the first section."""

    front: FrontMatter
    sections: tuple[Section, ...]
    preamble: str = ""
    front_matter_text: str | None = None

    def section(self, title: str) -> Section | None:
        return next((s for s in self.sections if s.title == title), None)

    @property
    def body(self) -> str:
        """Everything after the front matter: what is injected and what the budget counts."""
        return self.preamble + "".join(f"# {s.title}\n{s.body}" for s in self.sections)
