"""Text edits the capsule editor's actions make, and what it asks the agent.

Pure functions over the capsule's Markdown (no Textual): where a section starts and
ends, adding a bullet to a section, swapping a section's body for a draft, the line a
transcript highlight becomes, and the request that asks a session to (re)draft.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import NamedTuple

from core.drafting.capsule_extract import extract_capsule
from core.models import Message
from tui.capsules.report import front_matter_end
from tui.shared.safe_text import first_line

HIGHLIGHT_CHARS = 160
"""A highlight quotes at most this much of its message: a pointer, not a transcript."""


class SectionSpan(NamedTuple):
    """0-based rows: the heading's, and the first row after the section's body."""

    heading: int
    end: int


def section_span(text: str, title: str) -> SectionSpan | None:
    """Where ``# title`` and its body sit in ``text`` (None: no such section)."""
    lines = text.splitlines()
    start = None
    fenced = False
    for row in range(front_matter_end(lines), len(lines)):
        line = lines[row]
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line.startswith("# "):
            continue
        if start is not None:
            return SectionSpan(start, row)
        if line[2:].strip() == title:
            start = row
    return SectionSpan(start, len(lines)) if start is not None else None


def section_at(text: str, row: int) -> str | None:
    """The title of the section holding 0-based ``row`` (None: front matter or preamble)."""
    lines = text.splitlines()
    title = None
    fenced = False
    for index in range(front_matter_end(lines), min(row + 1, len(lines))):
        line = lines[index]
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            title = line[2:].strip()
    return title


def add_to_section(text: str, title: str, entry: str) -> tuple[str, int]:
    """``text`` with ``entry`` (one or more lines) after the last written line of
    section ``title``, and the 0-based row it starts on. A missing section is added
    at the end."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = entry if entry.endswith("\n") else entry + "\n"
    span = section_span(text, title)
    if span is None:
        lines.extend(["\n", f"# {title}\n", block])
        return "".join(lines), len(lines) - 1
    row = span.end
    while row > span.heading + 1 and not lines[row - 1].strip():
        row -= 1
    lines.insert(row, block)
    return "".join(lines), row


def replace_section(text: str, title: str, section: str) -> str:
    """``text`` with section ``title`` (heading and body) replaced by ``section``."""
    span = section_span(text, title)
    lines = text.splitlines(keepends=True)
    if span is None:
        return add_to_section(text, title, section.split("\n", 1)[-1])[0]
    body = section if section.endswith("\n") else section + "\n"
    following = lines[span.end :]
    if following and not body.endswith("\n\n"):
        body += "\n"
    return "".join(lines[: span.heading]) + body + "".join(following)


def highlight_line(message: Message) -> str:
    """A Transcript Highlights bullet for ``message``: its UTC time, who said it, a short
    quote and the message it came from (the reference a highlight must carry)."""
    at = message.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")
    quote = first_line(" ".join(message.content.split()), HIGHLIGHT_CHARS)
    return f'- {at} {message.role}: "{quote}" (message {message.id[:8]})'


_FENCE = re.compile(r"^(```|~~~)[\w-]*\n(?P<body>.*?)^\1\s*$", re.DOTALL | re.MULTILINE)


def reply_markdown(reply: str) -> str:
    """The Markdown an agent answered with: the fenced block if it wrote one."""
    fenced = _FENCE.search(reply)
    return (fenced.group("body") if fenced else reply).strip("\n") + "\n"


def drafted_section(reply: str, title: str) -> str | None:
    """Section ``title`` out of the agent's reply (heading included), or None."""
    markdown = reply_markdown(reply)
    span = section_span(markdown, title)
    if span is None:
        return None
    lines = markdown.splitlines(keepends=True)
    return "".join(lines[span.heading : span.end]).rstrip("\n") + "\n"


def drafted_capsule(reply: str) -> str | None:
    """The whole capsule out of the agent's reply (front matter first), or None."""
    return extract_capsule(reply)


def section_request(text: str, title: str) -> str:
    """Ask the session to (re)draft one section of the capsule in the editor."""
    return (
        f"Draft the `# {title}` section of the context capsule below from what you know "
        "of this session: newest, blocking and high-severity items first, references "
        "instead of explanations, no secrets. Answer with that section only, its "
        f"`# {title}` heading first, in one fenced Markdown block.\n\n"
        f"```markdown\n{text}```\n"
    )


def capsule_request(text: str) -> str:
    """Ask the session to (re)draft the whole capsule in the editor."""
    return (
        "Draft the context capsule below from what you know of this session. Keep its "
        "front matter and its sections in their order, stay within its token_budget, "
        "cite a timestamp, message or commit for each transcript highlight (at most 5), "
        "and leave out secrets. Answer with the complete capsule, front matter first, in "
        f"one fenced Markdown block.\n\n```markdown\n{text}```\n"
    )


CONSUMPTION = (
    "Treat this capsule as authoritative for current context. Verify plan/progress "
    "notebooks align; note discrepancies in your progress log. If critical information "
    "seems missing, record a `Capsule Gap` note and say so."
)
"""The seed's consumption instructions, under the capsule a prompt carries."""


def follow_up_draft(text: str, path: object) -> str:
    """A follow-up prompt carrying the capsule: a line for the task, then the
    ``## Context Capsule`` block with the body and the consumption instructions."""
    lines = text.splitlines(keepends=True)
    body = "".join(lines[front_matter_end(lines) :]).strip("\n")
    return f"\n\n## Context Capsule\n(from {path})\n\n{body}\n\n{CONSUMPTION}\n"
