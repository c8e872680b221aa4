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

    @property
    def problem_line(self) -> str | None:
        """One line for a status bar when something needs a look, else None."""
        if self.unreadable:
            n = len(self.unreadable)
            noun = "file" if n == 1 else "files"
            return f"{n} {noun} unreadable — see `delegate import --report`"
        if self.entries_skipped:
            n = self.entries_skipped
            noun = "entry" if n == 1 else "entries"
            return f"{n} odd {noun} skipped — see `delegate import --report`"
        if self.files_with_skips_total:
            n = self.files_with_skips_total
            noun = "file has" if n == 1 else "files have"
            return f"{n} {noun} skipped lines — see `delegate import --report`"
        return None
