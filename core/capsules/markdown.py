"""A capsule's Markdown, read into the model and written back byte for byte.

Parsing splits the text at the front matter's delimiters and at level-1 headings
(``# Title``, outside fenced code), and keeps every byte: the front-matter block as
written, the prose before the first section, each heading line and body verbatim. So
``render_capsule(parse_capsule(text)) == text`` for any text ``parse_capsule`` accepts,
and a capsule built in code renders canonically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.capsules.front_matter import (
    is_delimiter,
    patch_front_matter,
    read_front_matter,
    render_front_matter,
)
from core.capsules.model import Capsule, FrontMatter, Section
from core.documents.problems import Problem
from core.errors import DelegateError

__all__ = [
    "CapsuleSyntaxError",
    "FrontMatterBlock",
    "lines_of",
    "parse_capsule",
    "parse_with_problems",
    "render_capsule",
    "split_sections",
]

_FENCE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})")


def heading_title(line: str, level: int = 1) -> str | None:
    """The title of an ATX heading of ``level`` (``# Title``, ``## Title #``), or None.

    Plain string work, not a regular expression: a backtracking pattern over a line of
    spaces takes seconds, and a capsule is text from anywhere.
    """
    text = line.rstrip("\r\n")
    marks = "#" * level
    if not text.startswith(marks) or text[level : level + 1] not in (" ", "\t"):
        return None
    title = text[level:].strip(" \t")
    closed = title.rstrip("#")
    if closed != title and (not closed or closed[-1] in " \t"):  # "Title ##": closing marks
        title = closed.rstrip(" \t")
    return title or None


def lines_of(text: str) -> list[str]:
    """``text`` cut after each ``\n`` (ends kept): lines as git, editors and ``path:line``
    count them; other breaks (``\r`` alone, U+2028, form feeds) stay inside a line."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


class CapsuleSyntaxError(DelegateError):
    """A capsule without usable front matter: it cannot be read at all. ``problems``
    says where (what ``validate_capsule`` reports for it)."""

    code = "capsule_syntax"

    def __init__(self, message: str, problems: list[Problem]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True, slots=True)
class FrontMatterBlock:
    """Where the front matter is: its text (delimiters included), the 1-based line of the
    closing delimiter, and the body after it."""

    text: str
    closing_line: int
    body: str


def split_front_matter(text: str) -> FrontMatterBlock:
    """The front-matter block at the top of ``text``; CapsuleSyntaxError when there is none
    (the first line is not ``---``, or no later line closes it)."""
    lines = lines_of(text)
    if not lines or not is_delimiter(lines[0].removeprefix("\ufeff")):  # a BOM is kept
        problem = Problem(
            1,
            "front_matter_missing",
            "a capsule starts with a front-matter block: a `---` line, the keys, a `---` line",
        )
        raise CapsuleSyntaxError(problem.message, [problem])
    for index in range(1, len(lines)):
        if is_delimiter(lines[index]):
            return FrontMatterBlock(
                text="".join(lines[: index + 1]),
                closing_line=index + 1,
                body="".join(lines[index + 1 :]),
            )
    problem = Problem(
        1, "front_matter_missing", "the front matter opened on line 1 is never closed by `---`"
    )
    raise CapsuleSyntaxError(problem.message, [problem])


def split_sections(body: str, first_line: int = 1) -> tuple[str, tuple[Section, ...]]:
    """The prose before the first level-1 heading, and the sections (each with the line
    of its heading, counting ``body``'s first line as ``first_line``)."""
    preamble: list[str] = []
    sections: list[tuple[str, int, str, list[str]]] = []  # title, line, heading, body lines
    fence: str | None = None
    for number, line in enumerate(lines_of(body), start=first_line):
        opened = _FENCE.match(line)
        if opened is not None:
            marker = opened["fence"]
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
        title = heading_title(line) if fence is None else None
        if title is not None:
            sections.append((title, number, line, []))
        elif sections:
            sections[-1][3].append(line)
        else:
            preamble.append(line)
    return "".join(preamble), tuple(
        Section(title=title, body="".join(lines), line=number, heading=heading)
        for title, number, heading, lines in sections
    )


def parse_with_problems(text: str) -> tuple[Capsule, list[Problem]]:
    """The capsule in ``text`` and the problems of its front matter (what ``parse_capsule``
    forgives). Raises CapsuleSyntaxError when there is no front matter."""
    block = split_front_matter(text)
    inner = lines_of(block.text)[1:-1]
    front, problems = read_front_matter(inner, 2, block.closing_line)
    preamble, sections = split_sections(block.body, block.closing_line + 1)
    capsule = Capsule(
        front=front, sections=sections, preamble=preamble, front_matter_text=block.text
    )
    return capsule, problems


def parse_capsule(text: str) -> Capsule:
    """The capsule in ``text``, every byte kept.

    Raises CapsuleSyntaxError (with ``problems``) only when there is no usable front
    matter; unknown keys and bad values are left to ``validate_capsule`` (defaults
    stand in for them in the result).
    """
    return parse_with_problems(text)[0]


def render_capsule(capsule: Capsule) -> str:
    """The capsule's Markdown: a parsed capsule's exact text, a built one's canonical."""
    front = capsule.front_matter_text
    return (front if front is not None else render_front_matter(capsule.front)) + capsule.body


def with_front(capsule: Capsule, front: FrontMatter) -> Capsule:
    """``capsule`` with new front matter, the body kept verbatim. A parsed capsule keeps
    its block as written but for the keys whose value changed (so a key it lacked, or
    got wrong, is not papered over by the default the parse stood in with); a built one
    renders canonically."""
    written = capsule.front_matter_text
    if written is None:
        return capsule.model_copy(update={"front": front})
    patched = patch_front_matter(written, capsule.front, front)
    return capsule.model_copy(update={"front": front, "front_matter_text": patched})


_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")


def reader_body(capsule: Capsule) -> str:
    """The body as the sub-agent reads it: without the writer's HTML comments (the
    template's hints, notes to self) outside code fences, without the blank lines they
    leave, ending in one newline. An unclosed comment is kept as written."""
    kept: list[str] = []
    prose: list[str] = []
    fenced = False
    for line in capsule.body.splitlines(keepends=True):
        if _FENCE.match(line):
            if not fenced:
                kept.append(_without_comments("".join(prose)))
                prose = []
            fenced = not fenced
        (kept if fenced or _FENCE.match(line) else prose).append(line)
    kept.append(_without_comments("".join(prose)))
    return _BLANK_RUN.sub("\n\n", "".join(kept)).strip() + "\n"


def _without_comments(text: str) -> str:
    # str.find, not a pattern: linear however many openers a hostile text holds.
    parts, at = [], 0
    while (start := text.find("<!--", at)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        parts.append(text[at:start])
        at = end + 3
    parts.append(text[at:])
    return "".join(parts)
