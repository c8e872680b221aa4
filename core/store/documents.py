"""The context documents registry (capsules, hand-offs, compact returns).

The files live in a repository's ``.delegate/``; this table remembers each one:
its kind, path, digest, the session and run that produced it, the sessions that
consumed it, and the document it follows (a hand-off chain). Every kind shares
it: the seed-000 sub-agent registry, the seed-003 chain, the seed-002 index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from core.errors import UnknownDocument
from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.store.database import Database
from core.store.rows import clamp_count, clamp_time

_COLUMNS = (
    "document_id, kind, path, digest, source_session, run_id, previous_id, status, producer,"
    " token_estimate, created_at"
)
CHAIN_LIMIT = 1000
"""A chain longer than this is cut (a loop in stored links never hangs a reader)."""


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A document about to be registered (its file already written)."""

    document_id: str
    kind: DocumentKind
    path: str
    created_us: int
    digest: str = ""
    source_session: str | None = None
    run_id: str | None = None
    previous_id: str | None = None
    status: DocumentStatus = DocumentStatus.FINAL
    producer: str = ""
    token_estimate: int = 0


class DocumentsRepository:
    """The ``documents`` and ``document_consumers`` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def register(self, doc: NewDocument) -> ContextDocument:
        async with self._db.transaction() as db:
            await db.execute(
                f"INSERT INTO documents({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc.document_id,
                    doc.kind.value,
                    doc.path,
                    doc.digest,
                    doc.source_session,
                    doc.run_id,
                    doc.previous_id,
                    doc.status.value,
                    doc.producer,
                    doc.token_estimate,
                    doc.created_us,
                ),
            )
        return await self.get(doc.document_id)

    async def get(self, document_id: str) -> ContextDocument:
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM documents WHERE document_id = ?", (document_id,)
        )
        if row is None:
            raise UnknownDocument(f"no context document with id {document_id!r}")
        return (await self._with_consumers([row]))[0]

    async def by_path(self, path: str) -> ContextDocument | None:
        """The newest document registered at ``path`` (an absolute path), if any."""
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM documents WHERE path = ? ORDER BY created_at DESC LIMIT 1",
            (path,),
        )
        return None if row is None else (await self._with_consumers([row]))[0]

    async def find(
        self,
        kind: DocumentKind | None = None,
        *,
        source_session: str | None = None,
        status: DocumentStatus | None = None,
        limit: int = 100,
    ) -> list[ContextDocument]:
        """Documents newest first, filtered by kind, producing session and status."""
        where, params = ["1"], []
        if kind is not None:
            where.append("kind = ?")
            params.append(kind.value)
        if source_session is not None:
            where.append("source_session = ?")
            params.append(source_session)
        if status is not None:
            where.append("status = ?")
            params.append(status.value)
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM documents WHERE {' AND '.join(where)}"
            " ORDER BY created_at DESC, document_id LIMIT ?",
            (*params, limit),
        )
        return await self._with_consumers(rows)

    async def chain(self, document_id: str) -> list[ContextDocument]:
        """The chain ending at ``document_id``, oldest first (follows ``previous_id``)."""
        chain: list[ContextDocument] = []
        seen: set[str] = set()
        current: str | None = document_id
        while current is not None and current not in seen and len(chain) < CHAIN_LIMIT:
            seen.add(current)
            try:
                doc = await self.get(current)
            except UnknownDocument:
                break
            chain.append(doc)
            current = doc.previous_id
        return list(reversed(chain))

    async def set_status(self, document_id: str, status: DocumentStatus) -> None:
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE documents SET status = ? WHERE document_id = ?",
                (status.value, document_id),
            )

    async def set_path(self, document_id: str, path: str) -> None:
        """The file moved (archived): remember where it is now."""
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE documents SET path = ? WHERE document_id = ?", (path, document_id)
            )

    async def add_consumer(self, document_id: str, conversation_id: str) -> None:
        async with self._db.transaction() as db:
            await db.execute(
                "INSERT OR IGNORE INTO document_consumers(document_id, conversation_id)"
                " VALUES (?, ?)",
                (document_id, conversation_id),
            )

    async def remove(self, document_ids: Sequence[str]) -> None:
        """Forget documents (their files were pruned)."""
        async with self._db.transaction() as db:
            await db.executemany(
                "DELETE FROM documents WHERE document_id = ?", [(d,) for d in document_ids]
            )

    async def _with_consumers(self, rows: Sequence[aiosqlite.Row]) -> list[ContextDocument]:
        docs = []
        for row in rows:
            consumers = await self._db.fetch_all(
                "SELECT conversation_id FROM document_consumers WHERE document_id = ?"
                " ORDER BY conversation_id",
                (row["document_id"],),
            )
            docs.append(_document(row, tuple(str(c[0]) for c in consumers)))
        return docs


def _document(row: aiosqlite.Row, consumers: tuple[str, ...]) -> ContextDocument:
    kinds = {k.value: k for k in DocumentKind}
    statuses = {s.value: s for s in DocumentStatus}
    return ContextDocument(
        document_id=str(row["document_id"]),
        kind=kinds.get(str(row["kind"]), DocumentKind.HANDOFF),
        path=str(row["path"]),
        digest=str(row["digest"] or ""),
        source_session=row["source_session"],
        run_id=row["run_id"],
        previous_id=row["previous_id"],
        status=statuses.get(str(row["status"]), DocumentStatus.FINAL),
        producer=str(row["producer"] or ""),
        token_estimate=clamp_count(row["token_estimate"]),
        created_at=clamp_time(row["created_at"]),
        consumers=consumers,
    )
