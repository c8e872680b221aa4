"""Capsules in the documents registry: registering one, finding it, recording its use.

The file is the capsule; the registry row remembers its digest (the same one a
run and a session record when they carry it), the session it distils, the
capsule of the same branch it follows, and every session that was launched with
it (the seed's sub-agent registry).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from core.clock import system_clock, to_us
from core.documents.handoff_registry import digest
from core.documents.holder import HasDocuments
from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.store import NewDocument
from core.tokens import count_tokens


def _key(path: Path) -> str:
    """How a capsule's path is stored: absolute, so any front end finds the same row."""
    return str(path.absolute())


async def register_capsule(
    store: HasDocuments,
    path: Path,
    text: str,
    *,
    source_session: str | None,
    producer: str,
    status: DocumentStatus = DocumentStatus.FINAL,
    previous_id: str | None = None,
    created: datetime | None = None,
) -> ContextDocument:
    """Register a capsule already written at ``path`` (``text`` is what was written).

    ``producer`` says who wrote it: ``agent`` (asked for it), ``person`` (the editor,
    by hand). A draft awaits review; ``previous_id`` is the branch's capsule it follows.
    """
    return await store.documents.register(
        NewDocument(
            document_id=str(uuid.uuid4()),
            kind=DocumentKind.CAPSULE,
            path=_key(path),
            created_us=to_us(created or system_clock()),
            digest=digest(text),
            source_session=source_session,
            previous_id=previous_id,
            status=status,
            producer=producer,
            token_estimate=await asyncio.to_thread(count_tokens, text),
        )
    )


async def capsule_document(store: HasDocuments, path: Path) -> ContextDocument | None:
    """The newest capsule row registered for the file at ``path``, if any."""
    document = await store.documents.by_path(_key(path))
    return document if document is not None and document.kind is DocumentKind.CAPSULE else None


async def current_capsule_document(
    store: HasDocuments, path: Path, text: str
) -> ContextDocument | None:
    """The row for ``path`` when it still describes ``text`` (same digest), else None:
    a capsule edited since it was registered needs a new row."""
    document = await capsule_document(store, path)
    return document if document is not None and document.digest == digest(text) else None


async def record_use(store: HasDocuments, document_id: str, conversation_id: str) -> None:
    """``conversation_id`` was launched with the capsule (a consumer; capsules stay reusable)."""
    await store.documents.add_consumer(document_id, conversation_id)


async def forget_capsules(store: HasDocuments, paths: Iterable[Path]) -> list[str]:
    """Remove the rows of capsules whose files were pruned; the ids removed."""
    ids = []
    for path in paths:
        while (document := await capsule_document(store, path)) is not None:
            await store.documents.remove([document.document_id])
            ids.append(document.document_id)
    return ids
