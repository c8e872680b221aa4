"""The capsule envelope: front matter, the fixed outline, and what a parse keeps.

A capsule is Markdown with a front-matter block (seed 000 "Capsule Structure"), then
level-1 sections in a fixed order. The model keeps every byte a person wrote (prose
before the first section, extra lines inside sections), so rendering a parsed capsule
gives back the same text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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

REQUIRED_KEYS: tuple[str, ...] = (
    "branch",
    "source_session",
    "created_at",
    "primary_objective",
    "token_budget",
    "version",
)
"""Keys every capsule's front matter must give (the seed's envelope)."""

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
TEMPLATES: tuple[str, ...] = ("full", "mini")

_BLOB = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # git's sha1 or sha256 object ids
_VERSION = re.compile(r"\d+(?:\.\d+)*")


def section_key(title: str) -> str:
    """How a heading is matched to the outline: case and spacing do not matter."""
    return " ".join(title.split()).casefold()


def reference_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be a reference (None: it can): references are relative to
    the repository root, with POSIX separators, and never leave it."""
    if not path or path != path.strip():
        return "a reference needs a path relative to the repository root"
    if "\\" in path or any(ord(c) < 32 for c in path):
        return f"reference path {path!r} must use / separators and no control characters"
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        return f"reference path {path!r} must stay inside the repository (relative, no ..)"
    return None


def blob_problem(blob: str) -> str | None:
    """Why ``blob`` is not a git blob id (None: it is)."""
    if _BLOB.fullmatch(blob) is None:
        return f"blob {blob!r} is not a git object id (40 or 64 lowercase hex digits)"
    return None


def version_problem(version: str) -> str | None:
    if _VERSION.fullmatch(version) is None:
        return f"version {version!r} is not a dotted number such as 0.1"
    return None


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Reference(_Frozen):
    """A file the capsule relies on, with its git blob id when the capsule was written
    (None: not tracked, or not in a git repository). Not checked on construction: a
    reference read from a capsule is untrusted data that every reader checks
    (``reference_path_problem``, ``blob_problem``; validation reports both)."""

    path: str  # relative to the repository root, POSIX separators
    blob: str | None = None


class FrontMatter(_Frozen):
    """The envelope's metadata. A miniature capsule (``template="mini"``) built without a
    ``token_budget`` gets ``MINI_BUDGET``; ``created_at`` is kept in UTC."""

    branch: str
    source_session: str
    created_at: datetime  # UTC
    primary_objective: str
    token_budget: int = Field(default=DEFAULT_BUDGET, gt=0)
    version: str = "0.1"
    template: Template = "full"
    references: tuple[Reference, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _mini_budget(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("template") == "mini":
            data.setdefault("token_budget", MINI_BUDGET)
        return data

    @field_validator("created_at")
    @classmethod
    def _utc(cls, created_at: datetime) -> datetime:
        if created_at.tzinfo is None:  # built in code from a naive UTC clock
            return created_at.replace(tzinfo=UTC)
        return created_at.astimezone(UTC)

    @field_validator("version")
    @classmethod
    def _dotted_version(cls, version: str) -> str:
        if (problem := version_problem(version)) is not None:
            raise ValueError(problem)
        return version

    @property
    def outline(self) -> tuple[str, ...]:
        return MINI_SECTIONS if self.template == "mini" else SECTIONS


class Section(_Frozen):
    """A level-1 section: its title as written and its body verbatim (every line after
    the heading up to the next level-1 heading, newlines included). ``heading`` is the
    heading line as written, newline included ("" when built: ``# {title}``)."""

    title: str
    body: str
    line: int = 0  # 1-based line of the heading in the text it was parsed from (0: built)
    heading: str = ""

    @property
    def heading_text(self) -> str:
        """The heading line as it is rendered."""
        return self.heading or f"# {self.title}\n"

    @property
    def key(self) -> str:
        return section_key(self.title)


class Capsule(_Frozen):
    """A parsed (or built) capsule. ``front_matter_text`` is the block as written (None
    when built in code: rendered from ``front``); ``preamble`` the text between the front
    matter and the first section."""

    front: FrontMatter
    sections: tuple[Section, ...]
    preamble: str = ""
    front_matter_text: str | None = None

    def section(self, title: str) -> Section | None:
        """The first section with this title (case and spacing ignored)."""
        key = section_key(title)
        return next((s for s in self.sections if s.key == key), None)

    @property
    def body(self) -> str:
        """Everything after the front matter: what is injected and what the budget counts."""
        return self.preamble + "".join(_section_text(s) for s in self.sections)


def _section_text(section: Section) -> str:
    if section.heading or not section.body or section.body.endswith("\n"):
        return section.heading_text + section.body
    return section.heading_text + section.body + "\n"  # built: every section ends its line
