"""Conversations: reading and administering sessions, wherever their messages are kept.

One object per concern, each over the shared :class:`~core.services.CoreServices`::

    ids          ids people type, ids delegate prints            (conversations/ids.py)
    reader       lists, children, messages, find, search, counts (conversations/reading.py)
    imports      agents' transcripts read into the store         (conversations/importing.py)
    archive      archive, restore, rename, purge, dependants     (conversations/archive.py)
    checkpoints  marks, restores and forks                       (conversations/checkpoints.py)
    documents    capsules, hand-offs, compact returns, chains    (conversations/documents.py)

Where a session's messages live (stored by delegate, or in an agent CLI's transcript)
is decided once, in :mod:`core.conversations.sources`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.conversations.archive import SessionArchive
from core.conversations.checkpoints import Checkpoints
from core.conversations.documents import DocumentReader
from core.conversations.ids import SessionIds
from core.conversations.importing import TranscriptImports
from core.conversations.reading import SessionReader
from core.services import CoreServices


@dataclass(frozen=True, slots=True)
class Conversations:
    """The conversation wing, composed once per open core."""

    ids: SessionIds
    reader: SessionReader
    imports: TranscriptImports
    archive: SessionArchive
    checkpoints: Checkpoints
    documents: DocumentReader

    @classmethod
    def make(cls, core: CoreServices) -> Conversations:
        ids = SessionIds(core)
        reader = SessionReader(core, ids)
        return cls(
            ids=ids,
            reader=reader,
            imports=TranscriptImports(core, reader),
            archive=SessionArchive(core, ids),
            checkpoints=Checkpoints(core, ids),
            documents=DocumentReader(core),
        )
