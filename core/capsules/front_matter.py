"""The capsule's front matter: the small YAML subset capsules use, read and written.

The envelope (seed 000) is flat ``key: value`` lines plus one list, ``references``, of
``path``/``blob`` items. Reading is forgiving: every line a person got wrong becomes a
:class:`Problem` with its line, and the :class:`FrontMatter` is built from what could be
read (defaults stand in for the rest), so an editor can keep showing a capsule while it
is being typed. Writing is canonical: the keys in ``FRONT_MATTER_KEYS`` order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.capsules.model import (
    DEFAULT_BUDGET,
    FRONT_MATTER_KEYS,
    MINI_BUDGET,
    REQUIRED_KEYS,
    TEMPLATES,
    FrontMatter,
    Reference,
    blob_problem,
    reference_path_problem,
    version_problem,
)
from core.documents.problems import Problem

DELIMITER = "---"
REFERENCE_KEYS: tuple[str, ...] = ("path", "blob")

_KEY_LINE = re.compile(r"(?P<key>[A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(?P<value>.*)|[ \t]*)$")
_ITEM_LINE = re.compile(r"(?P<indent>[ \t]*)-(?:[ \t]+(?P<rest>.*)|[ \t]*)$")
_COMMENT = re.compile(r"[ \t]#")  # a plain scalar's comment starts at the first " #"
# Plain scalars that YAML would read as something else, or that our reader would cut.
_NEEDS_QUOTES = re.compile(r"""^[\s!"#%&'*,>?@`|{}\[\]-]|[:#]\s|[:\s]$|^$|[\x00-\x1f"\\]""")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""``created_at`` while the front matter has none readable (validation says so)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One ``- ...`` item of the ``references`` list: its fields, each with its line."""

    line: int
    fields: dict[str, tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level ``key: value`` line (``items`` for a block list under it)."""

    key: str
    value: str  # the raw text after the colon, stripped
    line: int
    items: list[Item] = field(default_factory=list)


def is_delimiter(line: str) -> bool:
    return line.rstrip() == DELIMITER


def read_entries(lines: list[str], first_line: int) -> tuple[list[Entry], list[Problem]]:
    """The entries of the front matter's ``lines`` (without the delimiters; the first is
    line ``first_line`` of the capsule) and the lines that are not ``key: value``."""
    entries: list[Entry] = []
    problems: list[Problem] = []
    for number, raw in enumerate(lines, start=first_line):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # blank lines and YAML comments carry nothing
        item = _ITEM_LINE.match(line)
        if item is not None and entries:  # a list item belongs to the key above it
            entries[-1].items.append(Item(number))
            _read_item_field(entries[-1].items[-1], item["rest"] or "", number, problems)
            continue
        if line[:1] in " \t" and entries and entries[-1].items:
            _read_item_field(entries[-1].items[-1], line.strip(), number, problems)
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            problems.append(
                Problem(number, "front_matter_bad_value", f"not a `key: value` line: {line!r}")
            )
            continue
        entries.append(Entry(match["key"], (match["value"] or "").strip(), number))
    return entries, problems


def _read_item_field(item: Item, text: str, number: int, problems: list[Problem]) -> None:
    if not text:
        return
    match = _KEY_LINE.match(text)
    if match is None:  # `- docs/plan.md`: a bare path
        if "path" in item.fields:
            problems.append(Problem(number, "front_matter_bad_value", _ITEM_HELP))
        else:
            item.fields["path"] = (text, number)
        return
    key = match["key"]
    if key in item.fields:
        problems.append(Problem(number, "front_matter_bad_value", f"{key} given twice"))
        return
    item.fields[key] = ((match["value"] or "").strip(), number)


_ITEM_HELP = "each reference is `- path: <file>` with an optional `blob: <git blob id>` line"


def scalar(raw: str) -> str:
    """The string a YAML scalar stands for: quoted (``"..."`` with escapes, ``'...'``)
    or plain (a trailing `` # comment`` cut). Raises ValueError for a broken quote."""
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, str):
            raise ValueError(f"unclosed or broken double quotes: {raw}")
        return value
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'") or "'" in raw[1:-1].replace("''", ""):
            raise ValueError(f"unclosed or broken single quotes: {raw}")
        return raw[1:-1].replace("''", "'")
    comment = _COMMENT.search(raw)
    return (raw[: comment.start()] if comment else raw).strip()


def quoted(value: str) -> str:
    """``value`` as a YAML scalar, quoted only when a plain scalar would change it."""
    return json.dumps(value, ensure_ascii=False) if _NEEDS_QUOTES.search(value) else value


def read_front_matter(
    lines: list[str], first_line: int, closing_line: int
) -> tuple[FrontMatter, list[Problem]]:
    """The front matter its ``lines`` describe, and every problem with them.

    Missing or bad values fall back to defaults in the result; the problems say what
    to fix (missing keys are reported on the ``closing_line``, where they would go).
    """
    entries, problems = read_entries(lines, first_line)
    values: dict[str, object] = {}
    seen: dict[str, int] = {}
    for entry in entries:
        if entry.key not in FRONT_MATTER_KEYS:
            known = ", ".join(FRONT_MATTER_KEYS)
            problems.append(
                Problem(
                    entry.line,
                    "front_matter_unknown_key",
                    f"unknown key {entry.key!r}; a capsule's front matter knows {known}",
                )
            )
            continue
        if entry.key in seen:
            problems.append(
                Problem(
                    entry.line,
                    "front_matter_bad_value",
                    f"{entry.key} given twice (first on line {seen[entry.key]}); keep one",
                )
            )
            continue
        seen[entry.key] = entry.line
        try:
            values[entry.key] = _value(entry)
        except ValueError as bad:
            problems.append(Problem(entry.line, "front_matter_bad_value", str(bad)))
        if entry.key == "references":
            refs, ref_problems = _references(entry)
            values["references"] = refs
            problems.extend(ref_problems)
    for key in REQUIRED_KEYS:
        if key not in seen:
            problems.append(
                Problem(
                    closing_line,
                    "front_matter_missing_key",
                    f"the front matter has no {key}; add `{key}: {_EXAMPLES[key]}`",
                )
            )
    template = values.get("template", "full")
    defaults: dict[str, object] = {
        "branch": "",
        "source_session": "",
        "created_at": EPOCH,
        "primary_objective": "",
        "token_budget": MINI_BUDGET if template == "mini" else DEFAULT_BUDGET,
        "version": "0.1",
    }
    front = FrontMatter.model_validate(defaults | values)
    return front, problems


_EXAMPLES = {
    "branch": "<git branch>",
    "source_session": "<session id, or unknown>",
    "created_at": "2025-10-23T18:05:00Z",
    "primary_objective": '"<what the work is for, in one line>"',
    "token_budget": str(DEFAULT_BUDGET),
    "version": "0.1",
}


def _value(entry: Entry) -> object:
    """The typed value of one known entry; ValueError says what is wrong with it."""
    key = entry.key
    if key == "references":
        if entry.value not in ("", "[]"):
            raise ValueError(f"references is a list: {_ITEM_HELP}, one per line")
        return ()
    if entry.items:
        raise ValueError(f"{key} takes one value on its line, not a list")
    text = scalar(entry.value)
    if key in ("branch", "source_session", "primary_objective"):
        if not text.strip():
            raise ValueError(f"{key} is empty; give {_EXAMPLES[key]}")
        if key == "branch" and any(c.isspace() for c in text):
            raise ValueError(f"branch {text!r} is not a git branch name (it has spaces)")
        return text
    if key == "created_at":
        return _timestamp(text)
    if key == "token_budget":
        if not text.isdigit() or int(text) <= 0:
            raise ValueError(f"token_budget {text!r} must be a whole number of tokens above 0")
        return int(text)
    if key == "version":
        if (problem := version_problem(text)) is not None:
            raise ValueError(problem)
        return text
    if text not in TEMPLATES:  # template
        raise ValueError(f"template {text!r} must be full or mini")
    return text


def _timestamp(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"created_at {text!r} is not a timestamp; write it as 2025-10-23T18:05:00Z"
        ) from None
    if when.tzinfo is None:
        raise ValueError(f"created_at {text!r} has no time zone; write it in UTC with a Z")
    return when.astimezone(UTC)


def _references(entry: Entry) -> tuple[tuple[Reference, ...], list[Problem]]:
    refs: list[Reference] = []
    problems: list[Problem] = []
    for item in entry.items:
        bad = False
        for key, (_raw, number) in item.fields.items():
            if key not in REFERENCE_KEYS:
                problems.append(
                    Problem(
                        number, "front_matter_unknown_key", f"unknown key {key!r}; {_ITEM_HELP}"
                    )
                )
                bad = True
        if "path" not in item.fields:
            problems.append(Problem(item.line, "front_matter_bad_value", _ITEM_HELP))
            continue
        raw_path, path_line = item.fields["path"]
        try:
            path = scalar(raw_path)
        except ValueError as broken:
            problems.append(Problem(path_line, "front_matter_bad_value", str(broken)))
            continue
        if (problem := reference_path_problem(path)) is not None:
            problems.append(Problem(path_line, "front_matter_bad_value", problem))
            continue
        blob: str | None = None
        if "blob" in item.fields:
            raw_blob, blob_line = item.fields["blob"]
            try:
                text = scalar(raw_blob)
            except ValueError as broken:
                problems.append(Problem(blob_line, "front_matter_bad_value", str(broken)))
                continue
            if text not in ("", "null", "~"):
                if (problem := blob_problem(text)) is not None:
                    problems.append(Problem(blob_line, "front_matter_bad_value", problem))
                    continue
                blob = text
        if not bad:
            refs.append(Reference(path=path, blob=blob))
    return tuple(refs), problems


def render_front_matter(front: FrontMatter) -> str:
    """The canonical front-matter block, delimiters and final newline included."""
    lines = [DELIMITER]
    for key in FRONT_MATTER_KEYS:
        lines += key_lines(key, front)
    lines.append(DELIMITER)
    return "\n".join(lines) + "\n"


def key_lines(key: str, front: FrontMatter) -> list[str]:
    """The canonical lines of one key (none for references when there are none)."""
    if key == "references":
        lines = ["references:"] if front.references else []
        for ref in front.references:
            lines.append(f"  - path: {quoted(ref.path)}")
            if ref.blob is not None:
                lines.append(f"    blob: {ref.blob}")
        return lines
    value = getattr(front, key)
    if key == "created_at":
        return [f"created_at: {format_timestamp(value)}"]
    if key == "primary_objective":
        return [f"primary_objective: {json.dumps(value, ensure_ascii=False)}"]
    return [f"{key}: {quoted(str(value))}"]


def patch_front_matter(block: str, old: FrontMatter, new: FrontMatter) -> str:
    """The front-matter ``block`` as written (delimiters included) with only the keys
    whose value differs between ``old`` (what it was read as) and ``new`` rewritten in
    place, or added before the closing delimiter. Everything else stays as the person
    wrote it: comments, unknown keys, a missing key stays missing (and reported)."""
    lines = block.split("\n")
    newline = "\r\n" if lines[0].endswith("\r") else "\n"
    lines = [line.removesuffix("\r") for line in block.split("\n")]
    trailing = lines.pop() if lines[-1] == "" else None  # after the final newline
    entries, _ = read_entries([line + "\n" for line in lines[1:-1]], 2)
    first: dict[str, Entry] = {}
    for entry in entries:
        first.setdefault(entry.key, entry)
    replaced: dict[int, list[str]] = {}  # 0-based first line -> its new lines
    dropped: set[int] = set()
    added: list[str] = []
    for key in FRONT_MATTER_KEYS:
        if getattr(old, key) == getattr(new, key):
            continue
        rendered = key_lines(key, new)
        written = first.get(key)
        if written is None:
            added += rendered
            continue
        last = max(
            [written.line]
            + [item.line for item in written.items]
            + [line for item in written.items for _, line in item.fields.values()]
        )
        replaced[written.line - 1] = rendered
        dropped.update(range(written.line - 1, last))
    out: list[str] = []
    for index, line in enumerate(lines):
        if index == len(lines) - 1:
            out += added  # before the closing delimiter
        if index in replaced:
            out += replaced[index]
        if index not in dropped:
            out.append(line)
    if trailing is not None:
        out.append(trailing)
    return newline.join(out)


def format_timestamp(when: datetime) -> str:
    """``2025-10-23T18:05:00Z``: UTC, seconds (microseconds only when there are some)."""
    spec = "seconds" if when.microsecond == 0 else "microseconds"
    return when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec=spec) + "Z"
