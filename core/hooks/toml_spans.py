"""Where the top-level keys of a TOML text are, line for line.

Codex's ``config.toml`` is a person's file: delegate adds or takes out one
top-level ``notify = [...]`` statement and nothing else. A line-based search
would find ``notify =`` inside a multi-line string or a comment; this scanner
reads the top level as TOML does (strings of all four kinds, arrays over many
lines, inline tables, comments) and gives each statement's exact span, whole
lines from its first character to just after its newline. It stops at the
first table header, where the top level ends. The caller checks the meaning
with ``tomllib``; the text must already be valid TOML.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""(?:"{1,2}(?!"))?', re.DOTALL)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'''(?:'{1,2}(?!'))?", re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]\}#]+(?:[ T][0-9:.+\-Z]+)?")


@dataclass(frozen=True)
class Statement:
    """One top-level ``key = value`` (a dotted key's parts in ``key``)."""

    key: tuple[str, ...]
    start: int  # the start of its first line
    end: int  # just after its last line's newline (or the text's end)


def top_level(text: str) -> list[Statement]:
    """The statements before the first table header, in order."""
    found: list[Statement] = []
    pos = 0
    while pos < len(text):
        line_start = pos
        pos = _skip_blank(text, pos)
        if pos >= len(text):
            break
        char = text[pos]
        if char == "#":
            pos = _line_end(text, pos)
            continue
        if char in "\r\n":
            pos = _after_newline(text, pos)
            continue
        if char == "[":
            break  # a table: the top level ends
        key, pos = _key(text, pos)
        pos = _skip_blank(text, pos)
        if text[pos] != "=":
            raise ValueError(f"no '=' after a key at {pos}")
        pos = _value_end(text, _skip_blank(text, pos + 1))
        pos = _line_end(text, pos)
        found.append(Statement(key, line_start, pos))
    return found


def _key(text: str, pos: int) -> tuple[tuple[str, ...], int]:
    parts: list[str] = []
    while True:
        char = text[pos]
        if char == '"':
            match = _BASIC.match(text, pos)
            if match is None:
                raise ValueError(f"bad quoted key at {pos}")
            parts.append(json.loads(match.group()))
        elif char == "'":
            match = _LITERAL.match(text, pos)
            if match is None:
                raise ValueError(f"bad quoted key at {pos}")
            parts.append(match.group()[1:-1])
        else:
            match = _BARE_KEY.match(text, pos)
            if match is None:
                raise ValueError(f"bad key at {pos}")
            parts.append(match.group())
        pos = _skip_blank(text, match.end())
        if pos < len(text) and text[pos] == ".":
            pos = _skip_blank(text, pos + 1)
            continue
        return tuple(parts), pos


def _value_end(text: str, pos: int) -> int:
    """Just after the value starting at ``pos``."""
    for pattern in (_ML_BASIC, _ML_LITERAL, _BASIC, _LITERAL):
        match = pattern.match(text, pos)
        if match is not None:
            return match.end()
    char = text[pos]
    if char in "[{":
        closer = "]" if char == "[" else "}"
        pos += 1
        while True:
            pos = _skip_space_and_comments(text, pos)
            if text[pos] == closer:
                return pos + 1
            if text[pos] == ",":
                pos += 1
                continue
            if char == "{":
                _, pos = _key(text, pos)
                pos = _skip_blank(text, pos)
                pos += 1  # '='
                pos = _skip_blank(text, pos)
            pos = _value_end(text, pos)
    match = _SCALAR.match(text, pos)
    if match is None:
        raise ValueError(f"no TOML value at {pos}")
    return match.end()


def _skip_blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _skip_space_and_comments(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos] in " \t\r\n":
            pos += 1
        elif text[pos] == "#":
            while pos < len(text) and text[pos] != "\n":
                pos += 1
        else:
            break
    return pos


def _line_end(text: str, pos: int) -> int:
    """Just after the newline ending the line ``pos`` is on (a comment may come first)."""
    newline = text.find("\n", pos)
    return len(text) if newline < 0 else newline + 1


def _after_newline(text: str, pos: int) -> int:
    return pos + 2 if text.startswith("\r\n", pos) else pos + 1
