"""Where things are in a JSON text, and edits that change only their own span.

Claude Code's ``settings.json`` is a person's file: delegate must add and take out
its hook groups without re-serialising the rest (``json.dumps`` would turn
``1e400`` into ``Infinity``, which Claude Code cannot parse, and lose the
person's layout). This module finds the members of one object or the items of
one array with their exact offsets, and adds or removes one of them so that
removing what was added gives back the very same text.

The text must already be valid JSON (the caller parses it first); only the one
container asked for is scanned, the values inside it are skipped, not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

_WS = " \t\n\r"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]\}]+")
_STRUCT = re.compile(r'["{}\[\]]')

Render = Callable[[str | None, str, str], str]
"""``(indent, unit, newline) -> text`` of one item (see :func:`append`)."""


@dataclass(frozen=True)
class Item:
    """One member of an object (``key`` set) or item of an array."""

    start: int  # the key's opening quote, or the value's first character
    end: int  # just after the value
    value_start: int
    key: str | None = None


@dataclass(frozen=True)
class Container:
    """An object or array: its brackets' offsets and its items in order."""

    open: int
    close: int  # the closing bracket's offset
    items: tuple[Item, ...]

    def last(self, key: str) -> Item | None:
        """The member named ``key`` that counts (the last, as JSON readers take it)."""
        found = [item for item in self.items if item.key == key]
        return found[-1] if found else None


def skip_ws(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def value_end(text: str, at: int) -> int:
    """Just after the value starting at ``at`` (skipped, not decoded)."""
    first = text[at]
    if first == '"':
        return _string_end(text, at)
    if first in "{[":
        depth, pos = 0, at
        while True:
            match = _STRUCT.search(text, pos)
            if match is None:
                raise ValueError("unterminated JSON container")
            if match.group() == '"':
                pos = _string_end(text, match.start())
                continue
            depth += 1 if match.group() in "{[" else -1
            pos = match.end()
            if depth == 0:
                return pos
    match = _SCALAR.match(text, at)
    if match is None:
        raise ValueError(f"no JSON value at {at}")
    return match.end()


def container(text: str, at: int) -> Container:
    """The object or array whose opening bracket is at ``at``."""
    is_object = text[at] == "{"
    closer = "}" if is_object else "]"
    pos = skip_ws(text, at + 1)
    items: list[Item] = []
    if text[pos] == closer:
        return Container(at, pos, ())
    while True:
        key = None
        start = pos
        if is_object:
            key_end = _string_end(text, pos)
            key = json.loads(text[pos:key_end])
            colon = skip_ws(text, key_end)
            pos = skip_ws(text, colon + 1)
        end = value_end(text, pos)
        items.append(Item(start, end, pos, key))
        after = skip_ws(text, end)
        if text[after] == ",":
            pos = skip_ws(text, after + 1)
            continue
        return Container(at, after, tuple(items))


def root(text: str) -> Container | None:
    """The top-level object or array (None for a scalar or an empty text)."""
    at = skip_ws(text, 0)
    if at >= len(text) or text[at] not in "{[":
        return None
    return container(text, at)


def remove(text: str, box: Container, index: int) -> str:
    """``text`` without ``box``'s item ``index`` (the inverse of :func:`append`)."""
    items = box.items
    if len(items) == 1:
        return text[: box.open + 1] + text[box.close :]
    if index == 0:
        return text[: items[0].start] + text[items[1].start :]
    return text[: items[index - 1].end] + text[items[index].end :]


def append(text: str, box: Container, render: Render) -> str:
    """``text`` with one item added at the end of ``box``, laid out like its siblings.

    ``render(indent, unit)`` gives the item's text for a first line at ``indent``
    (``None``: all on one line). :func:`remove` of that item gives back ``text``.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    items = box.items
    if not items:
        outer = _line_indent(text, box.open)
        unit = indent_unit(text)
        inner = outer + unit
        added = newline + inner + render(inner, unit, newline) + newline + outer
        return text[: box.open + 1] + added + text[box.close :]
    before = text[box.open + 1 : items[0].start] if len(items) == 1 else None
    if before is None:
        gap = text[items[-2].end : items[-1].start]
        before = gap[gap.index(",") + 1 :]
    if "\n" in before:
        indent = before[before.rindex("\n") + 1 :]
        added = "," + before + render(indent, indent_unit(text), newline)
    else:
        added = "," + (before or " ") + render(None, "", newline)
    return text[: items[-1].end] + added + text[items[-1].end :]


def render_value(value: object, indent: str | None, unit: str, newline: str) -> str:
    """``value`` as JSON whose first line starts at ``indent`` (None: one line)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    laid = json.dumps(value, ensure_ascii=False, indent=unit or "  ")
    return laid.replace("\n", newline + indent)


def indent_unit(text: str) -> str:
    """The file's indentation step (that of the top level's first member; else two spaces)."""
    top = root(text)
    if top is not None and top.items:
        gap = text[top.open + 1 : top.items[0].start]
        if "\n" in gap:
            step = gap[gap.rindex("\n") + 1 :]
            outer = _line_indent(text, top.open)
            if step.startswith(outer) and len(step) > len(outer):
                return step[len(outer) :]
    return "  "


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _string_end(text: str, at: int) -> int:
    match = _STRING.match(text, at)
    if match is None:
        raise ValueError(f"unterminated JSON string at {at}")
    return match.end()
