"""Keeping the search index current with what the importer reads from transcripts.

Delegate's own titles and messages are indexed by triggers (migrations 6 and
8). An imported transcript's prompts and assistant text come from the import
workers (:mod:`core.sources.texts`), only for the lines each read covered: an
appended file adds its new lines; a file read from the start (new, or
rewritten) replaces what that file had indexed. The rows are written in the
import's own transaction, so the index and the saved read offsets never
disagree.

An imported transcript's texts are packed into *parts* of about
:data:`PART_CHARS` characters (one ``search_docs`` row each): FTS5's cost, to
write and to rank, grows with the number of rows far more than with their
length. A part keeps each text's role and time in ``marks`` (JSON, one
``[role, at_us]`` per text), and its texts are joined by :data:`SEPARATOR`, a
token no query can hold, so a phrase never runs from one message into the
next. An append fills the file's last part up before starting a new one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aiosqlite
import orjson

from core.sources.texts import SEPARATOR, Searchable
from core.store.database import first_row, id_chunks

PART_CHARS = 8 * 1024
"""A part is closed once it holds this many characters (a longer text is a part alone)."""
Part = tuple[str, str, int]
"""``(body, marks, at_us)`` of one packed part; ``at_us``: its first text's time."""


@dataclass(frozen=True, slots=True)
class TranscriptTexts:
    """What one read of one transcript file found to index."""

    conversation_id: str
    path: str
    from_start: bool
    texts: Sequence[Searchable]

    @property
    def origin(self) -> int:
        return file_origin(self.path)


def file_origin(path: str) -> int:
    """A transcript file's stable number in ``search_docs.origin`` (never 0: ours)."""
    digest = hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True) or 1


def pack(texts: Iterable[Searchable], limit: int = PART_CHARS) -> list[Part]:
    """Texts in order, packed into parts of about ``limit`` characters."""
    parts: list[Part] = []
    bodies: list[str] = []
    marks: list[tuple[str, int]] = []
    size = 0
    for role, at, text in texts:
        if bodies and size + len(text) > limit:
            parts.append(_part(bodies, marks))
            bodies, marks, size = [], [], 0
        bodies.append(text)
        marks.append((role, at))
        size += len(text) + len(SEPARATOR)
    if bodies:
        parts.append(_part(bodies, marks))
    return parts


def _part(bodies: list[str], marks: list[tuple[str, int]]) -> Part:
    return SEPARATOR.join(bodies), orjson.dumps(marks).decode(), marks[0][1]


def unpack(body: str, marks: str) -> list[Searchable]:
    """The texts of a stored part, for an append that fills it up."""
    return [
        (str(role), int(at), text)
        for (role, at), text in zip(json.loads(marks), body.split(SEPARATOR), strict=True)
    ]


class TranscriptIndexer:
    """Writes a batch of transcript reads into ``search_docs`` on a writer connection.

    Used as the import's ``also`` step (:meth:`ImportsRepository.apply`): it runs
    after the batch's sessions are written, in the same transaction. Purged
    sessions (not stored) and delegate's own sessions (indexed from
    ``messages``) are skipped; archived ones are indexed (``state:archived``).
    Titles of the imported sessions are indexed here too, in the batch's one
    FTS5 statement: a trigger would make FTS5 flush once per session.
    """

    def __init__(self, reads: Sequence[TranscriptTexts]) -> None:
        self._reads = list(reads)

    async def __call__(self, db: aiosqlite.Connection) -> None:
        if not self._reads:
            return
        wanted = await _indexable(db, sorted({r.conversation_id for r in self._reads}))
        if not wanted:
            return
        reads = [r for r in self._reads if r.conversation_id in wanted]
        await db.executemany(
            "DELETE FROM search_docs WHERE conversation_id = ? AND origin = ?",
            [(r.conversation_id, r.origin) for r in reads if r.from_start],
        )
        rows: list[tuple[str, int, str, int, str, str | None]] = []
        for read in reads:
            if not read.texts:
                continue
            texts = list(read.texts)
            if not read.from_start and (tail := await _open_part(db, read)) is not None:
                texts = tail + texts
            rows.extend(
                (read.conversation_id, read.origin, "texts", at, body, marks)
                for body, marks, at in pack(texts)
            )
        # Only now: an open part dropped above frees the highest id, and the part
        # that replaces it takes that id again; counted earlier, it would never be
        # indexed, and dropping it at the next import would damage the index.
        last = first_row(await db.execute_fetchall("SELECT max(id) FROM search_docs"))
        after = int(last[0]) if last is not None and last[0] is not None else 0
        await db.executemany(
            "INSERT INTO search_docs (conversation_id, origin, kind, at, body, marks)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        await _index_titles(db, sorted(wanted))
        # One statement for the batch: FTS5 tokenizes it all before flushing once.
        await db.execute(
            "INSERT INTO search_fts (rowid, body) SELECT id, body FROM search_docs WHERE id > ?",
            (after,),
        )


async def _open_part(db: aiosqlite.Connection, read: TranscriptTexts) -> list[Searchable] | None:
    """The texts of the file's last part when it has room left; that part is dropped.

    The appended texts are packed after them, so a file's parts stay about
    :data:`PART_CHARS` long however often it grows by a line.
    """
    row = first_row(
        await db.execute_fetchall(
            "SELECT id, body, marks FROM search_docs"
            " WHERE conversation_id = ? AND origin = ? ORDER BY id DESC LIMIT 1",
            (read.conversation_id, read.origin),
        )
    )
    if row is None or row["marks"] is None or len(row["body"]) >= PART_CHARS:
        return None
    await db.execute("DELETE FROM search_docs WHERE id = ?", (row["id"],))
    return unpack(str(row["body"]), str(row["marks"]))


async def _index_titles(db: aiosqlite.Connection, ids: list[str]) -> None:
    """Index the titles of these imported sessions that are new or changed."""
    for chunk, marks in id_chunks(ids):
        await db.execute(
            "DELETE FROM search_docs WHERE origin = 0 AND kind = 'title'"
            f" AND conversation_id IN ({marks}) AND body IS NOT (SELECT {_TITLE}"
            " FROM sessions s WHERE s.conversation_id = search_docs.conversation_id)",
            chunk,
        )
        await db.execute(
            "INSERT INTO search_docs (conversation_id, kind, at, body)"
            f" SELECT s.conversation_id, 'title', s.created_at, {_TITLE} FROM sessions s"
            f" WHERE s.conversation_id IN ({marks}) AND s.title != '' AND NOT EXISTS"
            " (SELECT 1 FROM search_docs d WHERE d.conversation_id = s.conversation_id"
            " AND d.origin = 0 AND d.kind = 'title')",
            chunk,
        )


# A title as indexed: free of the snippet markers (characters 2 and 3).
_TITLE = "replace(replace(s.title, char(2), ' '), char(3), ' ')"


async def _indexable(db: aiosqlite.Connection, ids: list[str]) -> set[str]:
    """The ids among ``ids`` of imported sessions stored now (archived too; not ours)."""
    found: set[str] = set()
    for chunk, marks in id_chunks(ids):
        rows = await db.execute_fetchall(
            "SELECT conversation_id FROM sessions"
            f" WHERE conversation_id IN ({marks}) AND source != 'delegate'",
            chunk,
        )
        found.update(str(r["conversation_id"]) for r in rows)
    return found
