"""Keeping the search index current with what the importer reads from transcripts.

Titles and delegate's own messages are indexed by triggers (migration 6). An
imported transcript's prompts and assistant text come from the import workers
(:mod:`core.sources.texts`), only for the lines each read covered: an appended
file adds its new lines; a file read from the start (new, or rewritten)
replaces what that file had indexed. The rows are written in the import's own
transaction, so the index and the saved read offsets never disagree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from core.sources.texts import Searchable
from core.store.database import first_row

_CHUNK = 500


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


class TranscriptIndexer:
    """Writes a batch of transcript reads into ``search_docs`` on a writer connection.

    Used as the import's ``also`` step (:meth:`ImportsRepository.apply`): it runs
    after the batch's sessions are written, in the same transaction. Dismissed
    sessions and delegate's own sessions (indexed from ``messages``) are skipped.
    """

    def __init__(self, reads: Sequence[TranscriptTexts]) -> None:
        self._reads = [r for r in reads if r.from_start or r.texts]

    async def __call__(self, db: aiosqlite.Connection) -> None:
        if not self._reads:
            return
        wanted = await _indexable(db, sorted({r.conversation_id for r in self._reads}))
        restarted = [
            (r.conversation_id, r.origin)
            for r in self._reads
            if r.from_start and r.conversation_id in wanted
        ]
        await db.executemany(
            "DELETE FROM search_docs WHERE conversation_id = ? AND origin = ?", restarted
        )
        last = first_row(await db.execute_fetchall("SELECT max(id) FROM search_docs"))
        after = int(last[0]) if last is not None and last[0] is not None else 0
        await db.executemany(
            "INSERT INTO search_docs (conversation_id, origin, kind, at, body)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                (r.conversation_id, r.origin, role, at, text)
                for r in self._reads
                if r.conversation_id in wanted
                for role, at, text in r.texts
            ],
        )
        # One statement for the batch: FTS5 tokenizes it all before flushing once.
        await db.execute(
            "INSERT INTO search_fts (rowid, body) SELECT id, body FROM search_docs WHERE id > ?",
            (after,),
        )


async def _indexable(db: aiosqlite.Connection, ids: list[str]) -> set[str]:
    """The ids among ``ids`` of imported sessions stored now (not dismissed, not ours)."""
    found: set[str] = set()
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = await db.execute_fetchall(
            "SELECT conversation_id FROM sessions"
            f" WHERE conversation_id IN ({marks}) AND source != 'delegate'",
            chunk,
        )
        found.update(str(r["conversation_id"]) for r in rows)
    return found
