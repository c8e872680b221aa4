"""The hand-off document's template (seed 003 §2): render, request, parse, validate.

One Markdown shape for both producers: an agent asked to write its own
hand-off (:func:`handoff_request` sends it the template) and delegate building
one from facts. Either way the metadata at the top comes from delegate's own
figures (:class:`HandoffHeader`), never from the agent's text: an agent's
reply contributes its sections only (:func:`parse_handoff`), and the document
is rendered again around them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from core.redact import find_secrets

HANDOFF_TITLE = "# Context Handoff"
HANDOFF_SECTIONS: tuple[str, ...] = (
    "Current Task",
    "Progress Summary",
    "Active Subagents",
    "Recent Decisions",
    "Files Modified",
    "Next Steps",
    "Important Context",
    "Links",
    "Instructions for New Instance",
)
"""The sections of a hand-off, in the seed's order (each a ``## `` heading)."""

PROGRESS_PARTS: tuple[str, ...] = ("Completed", "In Progress", "Pending")
"""The ``### `` parts of Progress Summary."""

NOTHING_RECORDED = "_Nothing recorded._"
"""What an empty section says: a hand-off never invents what nobody knows."""

MAX_HANDOFF_CHARS = 200_000
"""A hand-off longer than this would eat the next session's window: refused."""

# What each section asks for, shown to an agent in the template (seed wording).
SECTION_GUIDANCE: Mapping[str, str] = {
    "Current Task": "[Plain English description of what you were working on]",
    "Progress Summary": (
        "### Completed\n- [what is done]\n\n### In Progress\n- [what is under way]\n\n"
        "### Pending\n- [what is still to do]"
    ),
    "Active Subagents": "[Each running sub-agent: name, id, status, task; or - None]",
    "Recent Decisions": "[Each recent decision and its rationale]",
    "Files Modified": "[Each file you created or changed, and how]",
    "Next Steps": "[Numbered steps for the next instance, in order]",
    "Important Context": "[Constraints, requests and facts the next instance must know]",
    "Links": "[Plans, issues and documents that matter, by path or address]",
    "Instructions for New Instance": "[How to pick up: what to read, check and run first]",
}
_PLACEHOLDER = re.compile(r"^\s*(?:[-\d.]+\s*)?\[[^\]\n]{3,}\]\s*$", re.MULTILINE)
_SECTION_HEADING = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$")


@dataclass(frozen=True, slots=True)
class HandoffHeader:
    """The metadata at the top of a hand-off: delegate's own figures."""

    created: datetime
    previous_instance: str  # the session handing off
    used_tokens: int
    limit_tokens: int
    project: str  # the repository (or working folder) the work is in
    branch: str | None = None
    previous_handoff: str | None = None  # the document this one follows (its path)
    chain_position: int = 1  # this is hand-off number N of its chain

    @property
    def percent(self) -> int | None:
        if self.limit_tokens <= 0:
            return None
        return round(100 * self.used_tokens / self.limit_tokens)


def _usage(header: HandoffHeader) -> str:
    percent = header.percent
    if percent is None:
        return "unknown"
    return f"{header.used_tokens:,} / {header.limit_tokens:,} tokens ({percent}%)"


def _header_lines(header: HandoffHeader) -> list[str]:
    created = header.created.strftime("%Y-%m-%d %H:%M:%S")
    zone = header.created.tzname() or "local time"
    if header.previous_handoff:
        previous = (
            f"{header.previous_handoff} (this is handoff #{header.chain_position} in its chain)"
        )
    else:
        previous = "none (the first of its chain)"
    return [
        HANDOFF_TITLE,
        "",
        f"**Created**: {created} {zone}",
        f"**Previous Instance**: {header.previous_instance}",
        f"**Context Usage**: {_usage(header)}",
        f"**Project**: {header.project}",
        f"**Branch**: {header.branch or 'none (not a git branch)'}",
        f"**Previous Handoff**: {previous}",
    ]


def render_handoff(header: HandoffHeader, sections: Mapping[str, str]) -> str:
    """The document: the metadata, then every section in order (empty ones say so).

    Sections not in :data:`HANDOFF_SECTIONS` are ignored; their bodies are
    used as given (Markdown), trimmed.
    """
    lines = _header_lines(header)
    for name in HANDOFF_SECTIONS:
        body = sections.get(name, "").strip() or NOTHING_RECORDED
        lines += ["", "---", "", f"## {name}", "", body]
    return "\n".join(lines) + "\n"


def handoff_template(header: HandoffHeader) -> str:
    """The document with the seed's guidance in place of each section's content."""
    return render_handoff(header, SECTION_GUIDANCE)


def handoff_request(header: HandoffHeader) -> str:
    """The prompt that asks an agent to write its own hand-off, template included."""
    percent = header.percent
    used = f"{percent}% of" if percent is not None else "much of"
    return (
        f"Your context window is {used} full, so this session hands off to a new one.\n"
        "Write a hand-off document for the instance that continues your work: fill in"
        " every section of the template below from what you know (replace each"
        " [bracketed] guidance line; write '- None' where there is nothing to say; never"
        " invent). Keep the headings exactly as they are. Reply with the document only,"
        " no other text.\n\n" + handoff_template(header)
    )


def extract_handoff(reply: str) -> str | None:
    """The hand-off inside an agent's reply (prose and code fences around it cut), or None."""
    start = reply.find(HANDOFF_TITLE)
    if start < 0:
        return None
    lines = reply[start:].splitlines()
    # A closing fence ends the document; anything after it is the agent talking.
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            lines = lines[:i]
            break
    return "\n".join(lines).rstrip() + "\n"


def parse_handoff(text: str) -> dict[str, str]:
    """Each known section's body (trimmed, its ``---`` rule dropped), by name."""
    headings = list(_SECTION_HEADING.finditer(text))
    bodies: dict[str, str] = {}
    for i, match in enumerate(headings):
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        body = text[match.end() : end].strip()
        if body.endswith("---"):
            body = body[:-3].rstrip()
        name = match.group(1)
        if name in HANDOFF_SECTIONS and name not in bodies:
            bodies[name] = body
    return bodies


def validate_handoff(text: str) -> list[str]:
    """What is wrong with a hand-off document, one problem a line; empty when it is good."""
    problems: list[str] = []
    if len(text) > MAX_HANDOFF_CHARS:
        problems.append(f"it is {len(text):,} characters long; at most {MAX_HANDOFF_CHARS:,}")
    if not text.lstrip().startswith(HANDOFF_TITLE):
        problems.append(f"it must start with the title {HANDOFF_TITLE!r}")
    found = [m.group(1) for m in _SECTION_HEADING.finditer(text)]
    known = [name for name in found if name in HANDOFF_SECTIONS]
    missing = [name for name in HANDOFF_SECTIONS if name not in known]
    if missing:
        problems.append("sections missing: " + ", ".join(missing))
    doubled = sorted({name for name in known if known.count(name) > 1})
    if doubled:
        problems.append("sections given twice: " + ", ".join(doubled))
    if not missing and not doubled and known != list(HANDOFF_SECTIONS):
        problems.append("sections out of order; the order is: " + ", ".join(HANDOFF_SECTIONS))
    bodies = parse_handoff(text)
    progress = bodies.get("Progress Summary")
    if progress is not None and progress != NOTHING_RECORDED:
        parts = re.findall(r"^### +(.+?)\s*$", progress, re.MULTILINE)
        absent = [part for part in PROGRESS_PARTS if part not in parts]
        if absent:
            problems.append("Progress Summary lacks its parts: " + ", ".join(absent))
    templated = [name for name, body in bodies.items() if _PLACEHOLDER.search(body)]
    if templated:
        problems.append("sections still hold the template's placeholder: " + ", ".join(templated))
    secrets = find_secrets(text)
    if secrets:
        lines = ", ".join(str(f.line) for f in secrets[:5])
        problems.append(f"it holds what looks like a secret (line {lines}); leave secrets out")
    return problems
