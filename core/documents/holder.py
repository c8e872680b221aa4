"""What the document registries are handed: anything that holds the documents repository.

The store holds it, and so does a service given its repositories (the hand-off
pipeline, a capsule request), so the registries never need the whole store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from core.store.documents import DocumentsRepository


class HasDocuments(Protocol):
    """Whatever holds the documents repository: the store, or a service given it."""

    @property
    def documents(self) -> DocumentsRepository: ...
