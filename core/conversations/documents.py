"""Reading the documents sessions leave: capsules, hand-offs, compact returns and their chains.

Owns no state: the front ends read the documents registry and the compact-return
steps through these verbs instead of reaching into the store's repositories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.services import Wing

if TYPE_CHECKING:
    from core.returns.model import ReturnSession, ReturnStep

RETURN_SESSIONS = 1_000  # artifacts sessions listed at most (the store's own bound)


class DocumentReader(Wing):
    """Context documents and compact-return steps, as the front ends show them."""

    async def document(self, document_id: str) -> ContextDocument:
        """One registered document (``unknown_document`` when there is none)."""
        return await self.store.documents.get(document_id)

    async def find_documents(
        self,
        kind: DocumentKind | None = None,
        *,
        source_session: str | None = None,
        status: DocumentStatus | None = None,
        limit: int = 100,
    ) -> list[ContextDocument]:
        """Documents newest first, filtered by kind, producing session and status."""
        return await self.store.documents.find(
            kind, source_session=source_session, status=status, limit=limit
        )

    async def document_chain(self, document_id: str) -> list[ContextDocument]:
        """The chain of documents ending at ``document_id``, oldest first."""
        return await self.store.documents.chain(document_id)

    async def return_sessions(self, limit: int = RETURN_SESSIONS) -> list[ReturnSession]:
        """Artifacts sessions with compact-return steps, the most recently active first."""
        return await self.store.returns.sessions(limit)

    async def return_steps(self, session: str, group: str | None = None) -> list[ReturnStep]:
        """An artifacts session's steps (of ``group`` only, when given), by group then seq."""
        return await self.store.returns.for_session(session, group)
