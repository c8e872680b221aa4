"""The remember-later inbox: things to carry into the next capsule.

``<repo>/.delegate/capsules/remember-later.md`` is plain Markdown a person can
read and edit: one ``## <UTC time> · <topic>`` heading per entry, then its fields
as ``- name: value`` lines. Consuming an entry puts it into a capsule (its
Exploratory Threads & User Preferences section) and adds a ``- consumed:`` line
to the entry: it leaves the outstanding list but is never deleted. Every other
line of the file (a person's prose, lines we do not know) is kept as written.
Writers take a lock, so two processes remembering at once both land.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.atomic_files import is_disk_full
from core.capsules.storage import CAPSULES_DIR, capsules_dir, read_capsule, resolve_capsule
from core.documents.safe_files import ensure_folders, read_regular_text, replace_file
from core.errors import DiskFull, DocumentInvalid, InboxEntryUnknown, InvalidRequest

INBOX_FILE = "remember-later.md"
LOCK_FILE = ".remember-later.lock"
MAX_INBOX_BYTES = 1_000_000
EXPLORATORY = "Exploratory Threads & User Preferences"
MINI_TARGET = "Pending Actions"  # a miniature capsule has no exploratory section
HEADER = (
    "# Remember later\n\n"
    "Things to carry into the next capsule (`delegate capsule remember`). An entry\n"
    "consumed into a capsule stays here, marked with where it went.\n"
)
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
_HEADING = re.compile(r"^## (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)(?: · (.*))?$")
_FIELD = re.compile(r"^- (id|reminder|next step|tags|consumed): (.*)$")
_CONSUMED = re.compile(r"^(\S+Z) into (.+)$")
_FENCE = re.compile(r"^(```|~~~)")


@dataclass(frozen=True)
class InboxEntry:
    entry_id: str
    created_at: datetime
    reminder: str
    topic: str | None = None
    next_step: str | None = None
    tags: tuple[str, ...] = ()
    consumed_at: datetime | None = None
    consumed_into: str | None = None  # the capsule's path, relative to the repository

    @property
    def consumed(self) -> bool:
        return self.consumed_at is not None


def inbox_path(repo: Path) -> Path:
    return capsules_dir(repo) / INBOX_FILE


def _one_line(text: str | None) -> str | None:
    """Whitespace collapsed: a value never spans lines (nor starts a heading)."""
    if text is None:
        return None
    return " ".join(text.split()) or None


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_STAMP)


def _parse_stamp(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None


@dataclass
class _Block:
    """One entry as found in the file: its fields and the line its fields end on."""

    heading: str
    created_at: datetime
    topic: str | None
    last_line: int  # index of the entry's last field line (the heading when it has none)
    fields: dict[str, str]

    def entry(self) -> InboxEntry | None:
        reminder = self.fields.get("reminder")
        if not reminder:
            return None
        consumed_at, consumed_into = None, None
        if (found := _CONSUMED.match(self.fields.get("consumed", ""))) is not None:
            consumed_at, consumed_into = _parse_stamp(found.group(1)), found.group(2)
        # An entry a person wrote without an id gets one from what it says.
        derived = hashlib.sha256(f"{self.heading}\n{reminder}".encode()).hexdigest()[:8]
        return InboxEntry(
            entry_id=self.fields.get("id") or derived,
            created_at=self.created_at,
            reminder=reminder,
            topic=self.topic,
            next_step=self.fields.get("next step") or None,
            tags=tuple(t for t in (s.strip() for s in self.fields.get("tags", "").split(",")) if t),
            consumed_at=consumed_at,
            consumed_into=consumed_into,
        )


def _blocks(lines: Sequence[str]) -> list[_Block]:
    blocks: list[_Block] = []
    current: _Block | None = None
    for index, line in enumerate(lines):
        text = line.rstrip("\n")
        if (heading := _HEADING.match(text)) is not None:
            created = _parse_stamp(heading.group(1))
            current = None
            if created is not None:
                topic = _one_line(heading.group(2))
                current = _Block(text, created, topic, index, {})
                blocks.append(current)
        elif text.startswith("#"):
            current = None  # another heading ends the entry
        elif current is not None and (field := _FIELD.match(text)) is not None:
            current.fields.setdefault(field.group(1), field.group(2).strip())
            current.last_line = index
    return blocks


def _read(repo: Path) -> str:
    try:
        return read_regular_text(inbox_path(repo), what="inbox", max_bytes=MAX_INBOX_BYTES)
    except DocumentInvalid:
        if not os.path.lexists(inbox_path(repo)):
            return ""
        raise


@contextlib.contextmanager
def _locked(repo: Path) -> Iterator[Path]:
    """The capsules folder, held exclusively (across processes) while writing the inbox."""
    folder = ensure_folders(repo, CAPSULES_DIR, what="capsules")
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder / LOCK_FILE, flags, 0o644)
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(str(folder), f"cannot create {LOCK_FILE}") from None
        raise DocumentInvalid(f"cannot lock the inbox in {folder}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder
    finally:
        os.close(fd)


def _entries(text: str) -> list[InboxEntry]:
    blocks = _blocks(text.splitlines(keepends=True))
    return [entry for block in blocks if (entry := block.entry()) is not None]


def inbox_entries(repo: Path, include_consumed: bool = False) -> list[InboxEntry]:
    """The inbox's entries in file order (oldest first); outstanding ones unless asked."""
    entries = _entries(_read(repo))
    return entries if include_consumed else [e for e in entries if not e.consumed]


def remember(
    repo: Path,
    reminder: str,
    *,
    topic: str | None,
    next_step: str | None,
    tags: Sequence[str],
    now: datetime,
) -> InboxEntry:
    """Add an entry to the inbox; the entry. An empty reminder is :class:`InvalidRequest`."""
    text = _one_line(reminder)
    if text is None:
        raise InvalidRequest("a reminder needs some text: what should the next capsule carry?")
    clean_tags = tuple(t for t in (_one_line(tag.replace(",", " ")) for tag in tags) if t)
    with _locked(repo) as folder:
        existing = _read(repo)
        taken = {entry.entry_id for entry in _entries(existing)}
        entry_id = next(i for i in iter(lambda: uuid.uuid4().hex[:8], "") if i not in taken)
        entry = InboxEntry(
            entry_id=entry_id,
            created_at=now.astimezone(UTC).replace(microsecond=0),
            reminder=text,
            topic=_one_line(topic),
            next_step=_one_line(next_step),
            tags=clean_tags,
        )
        before = existing or HEADER
        if not before.endswith("\n"):
            before += "\n"
        replace_file(folder, INBOX_FILE, before + "\n" + _entry_text(entry))
    return entry


def _entry_text(entry: InboxEntry) -> str:
    heading = f"## {_stamp(entry.created_at)}" + (f" · {entry.topic}" if entry.topic else "")
    lines = [heading, f"- id: {entry.entry_id}", f"- reminder: {entry.reminder}"]
    if entry.next_step:
        lines.append(f"- next step: {entry.next_step}")
    if entry.tags:
        lines.append(f"- tags: {', '.join(entry.tags)}")
    return "\n".join(lines) + "\n"


def entry_bullet(entry: InboxEntry) -> str:
    """The entry as one capsule bullet (for Exploratory Threads & User Preferences)."""
    text = f"**{entry.topic}**: {entry.reminder}" if entry.topic else entry.reminder
    if entry.next_step:
        text += f" — next step: {entry.next_step}"
    source = f"remembered {_stamp(entry.created_at)}"
    if entry.tags:
        source += f"; tags: {', '.join(entry.tags)}"
    return f"- {text} ({source})\n"


def consume(
    repo: Path,
    entry_ids: Sequence[str],
    *,
    into: Path,
    now: datetime,
    insert: bool = True,
) -> list[InboxEntry]:
    """Mark outstanding entries consumed into the capsule at ``into``; the entries as marked.

    With ``insert`` (the default) their bullets are first added to the capsule file
    (the editor, which inserts them into its own text, passes False), which must then
    be a regular file inside the repository (else ``capsule_not_found`` /
    ``capsule_path_unsafe``). Raises :class:`InboxEntryUnknown` when an id names no
    outstanding entry; nothing changes then.
    """
    if insert:  # the file is rewritten: only a regular file inside the repository
        into = resolve_capsule(repo, str(into))
    into_name = _relative(repo, into)
    with _locked(repo) as folder:
        text = _read(repo)
        lines = text.splitlines(keepends=True)
        blocks = {
            entry.entry_id: (block, entry)
            for block in _blocks(lines)
            if (entry := block.entry()) is not None and not entry.consumed
        }
        unknown = [i for i in entry_ids if i not in blocks]
        if unknown:
            raise InboxEntryUnknown(
                f"no outstanding inbox entry with id {', '.join(unknown)}"
                " (`delegate capsule inbox` lists them)"
            )
        chosen = [blocks[i] for i in dict.fromkeys(entry_ids)]
        if insert:
            capsule = read_capsule(into)
            bullets = "".join(entry_bullet(entry) for _, entry in chosen)
            replace_file(into.parent, into.name, insert_into_capsule(capsule, bullets))
        mark = f"- consumed: {_stamp(now)} into {into_name}\n"
        for block, _ in sorted(chosen, key=lambda pair: pair[0].last_line, reverse=True):
            at = block.last_line
            if not lines[at].endswith("\n"):
                lines[at] += "\n"
            lines.insert(at + 1, mark)
        replace_file(folder, INBOX_FILE, "".join(lines))
    stamp = now.astimezone(UTC).replace(microsecond=0)
    return [
        InboxEntry(**{**entry.__dict__, "consumed_at": stamp, "consumed_into": into_name})
        for _, entry in chosen
    ]


def _relative(repo: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(repo.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def _section_bounds(lines: Sequence[str], title: str) -> tuple[int, int] | None:
    """The heading's index and the index past the section's last line, outside fences."""
    fenced, start = False, None
    for index, line in enumerate(lines):
        text = line.rstrip()
        if _FENCE.match(text):
            fenced = not fenced
            continue
        if fenced or not text.startswith("# "):
            continue
        if start is not None:
            return start, index
        if text[2:].strip() == title:
            start = index
    return None if start is None else (start, len(lines))


def _is_mini(text: str) -> bool:
    front = text.split("\n---", 1)[0] if text.startswith("---") else ""
    return re.search(r"^template:\s*['\"]?mini['\"]?\s*$", front, re.MULTILINE) is not None


def insert_into_capsule(text: str, bullets: str) -> str:
    """``text`` with ``bullets`` at the end of its exploratory section (a miniature
    capsule's Pending Actions); the section is added at the end when missing."""
    lines = text.splitlines(keepends=True)
    title = MINI_TARGET if _is_mini(text) else EXPLORATORY
    bounds = _section_bounds(lines, title)
    if bounds is None:
        ending = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{ending}\n# {EXPLORATORY}\n{bullets}"
    start, end = bounds
    last = end - 1
    while last > start and not lines[last].strip():
        last -= 1
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    lines.insert(last + 1, bullets)
    return "".join(lines)
