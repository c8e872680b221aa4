"""Hand-offs in the documents registry: registering one, finding its predecessor.

The file is the document; the registry remembers its digest, the session that
handed off, the document it follows (the chain) and who continued from it. A
hand-off is given to an agent only as delegate registered it: a file whose digest
changed since (edited on disk: an instruction or a secret planted in it) is
:class:`~core.errors.HandoffChanged` until a person reviews it.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from core.documents.handoff_files import read_handoff_file
from core.documents.holder import HasDocuments
from core.errors import HandoffChanged
from core.models import ContextDocument, DocumentKind, DocumentStatus, Session
from core.store import NewDocument
from core.tokens import count_tokens

SCAN_LIMIT = 500  # documents looked through for the one a session was started from


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def changed_notice(path: str) -> str:
    """What an agent (and a person) is told instead of a hand-off edited on disk."""
    return (
        f"the hand-off document {path} changed since delegate wrote it; not injected"
        f" — review it with `delegate handoff show {path}`"
    )


def read_registered(document: ContextDocument) -> str:
    """The hand-off's text, only while it still has the digest it was registered with.

    Raises :class:`HandoffChanged` when it differs (or none was kept), and what
    :func:`read_handoff_file` raises when it cannot be read.
    """
    text = read_handoff_file(Path(document.path))
    if not document.digest or digest(text) != document.digest:
        raise HandoffChanged(changed_notice(document.path))
    return text


async def register_handoff(
    store: HasDocuments,
    *,
    document_id: str,
    path: Path,
    text: str,
    created_us: int,
    producer: str,
    source_session: str | None,
    previous_id: str | None,
    run_id: str | None = None,
    status: DocumentStatus = DocumentStatus.FINAL,
) -> ContextDocument:
    """Register a hand-off already written at ``path`` (counted once, here)."""
    return await store.documents.register(
        NewDocument(
            document_id=document_id,
            kind=DocumentKind.HANDOFF,
            path=str(path),
            created_us=created_us,
            digest=digest(text),
            source_session=source_session,
            run_id=run_id,
            previous_id=previous_id,
            status=status,
            producer=producer,
            token_estimate=await asyncio.to_thread(count_tokens, text),
        )
    )


async def previous_handoff(store: HasDocuments, session: Session) -> ContextDocument | None:
    """The hand-off ``session`` was started from (the chain's last link), if any.

    The document it consumed when one is recorded; else the newest hand-off of
    the session it continued.
    """
    documents = await store.documents.find(DocumentKind.HANDOFF, limit=SCAN_LIMIT)
    for document in documents:
        if session.conversation_id in document.consumers:
            return document
    if session.continued_from:
        earlier = await store.documents.find(
            DocumentKind.HANDOFF, source_session=session.continued_from, limit=1
        )
        if earlier:
            return earlier[0]
    return None
