"""What an import reports: to the CLI (JSON or a progress bar) and to the TUI."""

# Annotations are evaluated as the classes are made (no `from __future__ import
# annotations`): pydantic would otherwise evaluate each string itself, which costs
# about twice as much, and these classes are made before the panel's first frame.

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class UnreadableFile(_Model):
    """A file or folder that could not be read, and why (the OS's words)."""

    path: str
    reason: str


class SkippedEntry(_Model):
    """A file or folder the walk left alone on purpose (docs/import.md, "Odd names and odd files").

    ``kind``: ``bad_name`` (not valid UTF-8; ``path`` shows its bytes as ``\\xff``
    escapes), ``not_regular`` (a FIFO, device or socket named like a transcript),
    ``loop`` (a folder already walked), ``outside_tree`` (a symlink out of the
    folder), ``too_deep``.
    """

    path: str
    kind: str
    reason: str


class FileSkips(_Model):
    """Lines of one file that were skipped (counts for the whole file)."""

    path: str
    source: str
    malformed_lines: int = 0
    unknown_lines: int = 0
    oversized_lines: int = 0
    error: str | None = None


class UnknownLineType(_Model):
    """Lines of a type no importer knows, by the agent version that wrote them.

    A new agent release adding a line type shows up here by name; ``version``
    is empty when the file never said which version wrote it.
    """

    source: str
    type: str
    version: str
    lines: int


class ImportProgress(_Model):
    """Sent to the progress callback after discovery and after every committed batch."""

    phase: Literal["scanning", "listing", "reading", "done"]
    files_total: int = 0  # files that need reading in this import (listing: to list)
    files_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    sessions_added: int = 0
    sessions_updated: int = 0
    sessions_listed: int = 0  # rows from heads and tails, before the full read


class ImportReport(_Model):
    """The outcome of one import; the last one is kept in the store."""

    started_at: datetime
    duration_s: float
    first_batch_s: float | None = None  # until the first batch was committed (rows visible)
    # Until every session of never-read files was listed from its head and tail
    # (core.sources.listing); None when the import read few enough to skip that pass.
    listing_s: float | None = None
    roots: dict[str, str] = {}
    workers: int = 0  # worker processes used (0: parsed in a thread of this process)
    files_seen: int = 0
    files_read: int = 0
    files_skipped_unchanged: int = 0
    files_rewritten: int = 0  # known files whose start changed: read again from 0
    files_without_session: int = 0  # empty, or no conversation in them (e.g. summary only)
    bytes_read: int = 0  # transcript bytes parsed (plus ``head_bytes_read`` to check prefixes)
    head_bytes_read: int = 0
    sessions_added: int = 0
    sessions_updated: int = 0
    sessions_listed: int = 0  # of ``sessions_added``: listed before their files were read
    sessions_skipped_dismissed: int = 0
    sessions_skipped_busy: int = 0  # delegate is running them right now
    sessions_skipped_invalid_id: int = 0  # an id its agent never mints (an option, a path)
    malformed_lines: int = 0  # found by this import
    unknown_lines: int = 0
    unknown_types: list[UnknownLineType] = []  # what ``unknown_lines`` were, most first (capped)
    oversized_lines: int = 0
    timestamps_ignored: int = 0  # unreadable or outside 2000..2100: the line counts, its time not
    unreadable: list[UnreadableFile] = []
    skipped: list[SkippedEntry] = []  # odd names and odd files, left alone (capped)
    entries_skipped: int = 0
    files_with_skips: list[FileSkips] = []  # every indexed file with skipped lines (capped)
    files_with_skips_total: int = 0
    # Of those, files with damage: malformed or oversized lines, or a read error (not
    # lines of a type no importer knows: those are ``unknown_types``, not damage).
    files_damaged_total: int = 0

    @property
    def problem_line(self) -> str | None:
        """One line for a status bar when something needs a look, else None.

        Only damage: a line type no importer knows is said by :attr:`unknown_line`.
        """
        if self.unreadable:
            n = len(self.unreadable)
            noun = "file" if n == 1 else "files"
            return f"{n} {noun} unreadable — see `delegate import --report`"
        if self.entries_skipped:
            n = self.entries_skipped
            noun = "entry" if n == 1 else "entries"
            return f"{n} odd {noun} skipped — see `delegate import --report`"
        if self.files_damaged_total:
            n = self.files_damaged_total
            noun = "file has" if n == 1 else "files have"
            return f"{n} {noun} skipped lines — see `delegate import --report`"
        return None

    @property
    def unknown_line(self) -> str | None:
        """What this import found of line types no importer knows, by name and the
        version that wrote them ("3 records of unknown type `foo` from Claude Code
        2.1.400"), else None."""
        if not self.unknown_types:
            return None
        first = self.unknown_types[0]
        noun = "record" if first.lines == 1 else "records"
        agent = AGENT_NAMES.get(first.source, first.source)
        version = _shown(first.version) or "(version not recorded)"
        text = f"{first.lines} {noun} of unknown type `{_shown(first.type)}` from {agent} {version}"
        more = len(self.unknown_types) - 1
        if more:
            text += f" and {more} more {'type' if more == 1 else 'types'}"
        return text + SEE_REPORT

    @property
    def summary_line(self) -> str:
        """What this import found, in one line, for a person who asked for it (the
        panel's f5): the sessions it added or updated, else "nothing new", and the
        files it checked and read."""
        checked = _count(self.files_seen, "file")
        if not (self.sessions_added or self.sessions_updated):
            read = f", {self.files_read} read" if self.files_read else ""
            return f"Import: nothing new, {checked} checked{read}"
        found = [
            f"{n} {what}"
            for n, what in ((self.sessions_added, "new"), (self.sessions_updated, "updated"))
            if n
        ]
        sessions = "session" if self.sessions_added + self.sessions_updated == 1 else "sessions"
        return f"Import: {' and '.join(found)} {sessions} · {self.files_read} of {checked} read"

    @property
    def damage_line(self) -> str | None:
        """The damage this import found itself (lines it skipped, files it could not
        read), else None. :attr:`problem_line` counts every indexed file instead."""
        lines = self.malformed_lines + self.oversized_lines
        parts = []
        if lines:
            parts.append(f"{_count(lines, 'damaged line')} skipped")
        if self.unreadable:
            parts.append(f"{_count(len(self.unreadable), 'file')} unreadable")
        if not parts:
            return None
        return ", ".join(parts) + SEE_REPORT


SEE_REPORT = " — see `delegate import --report`"
"""How a line about an import ends when ``delegate import --report`` has the details."""

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}
"""How a source is named to a person."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _shown(name: str) -> str:
    """A name read from a transcript, its control characters made visible."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)
