"""Finding the capsule in an agent's answer.

Agents answer a capsule prompt with the Markdown alone, or with a sentence before it, or
inside a code fence (```` ```markdown ````), sometimes with code fences of their own in
its sections. The capsule is the part from its front matter on: a ``---`` line, then a
``key: value`` line, and a closing ``---`` further down; when that part sits inside a
fence, it ends where that fence closes.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)\s*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*:")
_RULE = "---"


def extract_capsule(reply: str) -> str | None:
    """The capsule's Markdown in ``reply`` (ending with one newline), or None."""
    lines = reply.splitlines(keepends=True)
    outer: str | None = None  # the fence the scan is inside, if any
    for index, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence is not None:
            marker, info = fence.groups()
            if outer is None:
                outer = marker
            elif not info and _closes(marker, outer):
                outer = None
            continue
        if line.strip() == _RULE and _front_matter_at(lines, index):
            end = _fence_end(lines, index, outer) if outer is not None else len(lines)
            text = "".join(lines[index:end]).rstrip()
            return text.replace("\r\n", "\n") + "\n"
    return None


def _closes(marker: str, opened: str) -> bool:
    return marker[0] == opened[0] and len(marker) >= len(opened)


def _front_matter_at(lines: list[str], index: int) -> bool:
    """A ``---`` line opens front matter: a key follows it, and a closing ``---``."""
    rest = [line.strip() for line in lines[index + 1 :]]
    if not rest or not _KEY.match(rest[0]):
        return False
    return _RULE in rest[1:]


def _fence_end(lines: list[str], start: int, outer: str) -> int:
    """Where the fence the capsule sits in closes (a fence inside it, one with an info
    string such as ```` ```python ````, opens and closes within)."""
    inner: str | None = None
    for index in range(start + 1, len(lines)):
        fence = _FENCE.match(lines[index])
        if fence is None:
            continue
        marker, info = fence.groups()
        if inner is not None:
            if not info and _closes(marker, inner):
                inner = None
        elif info:
            inner = marker
        elif _closes(marker, outer):
            return index
    return len(lines)
