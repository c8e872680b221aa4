"""Where a session's messages live: stored by delegate, or kept in an agent CLI's transcript.

Owns that one decision. Every reader of a conversation (the preview's pages, finding
text, a checkpoint's mark, what a sub-agent inherits) asks :func:`message_source` and
talks to the :class:`MessageSource` it gets, never to the store or the transcript
directly. A new agent whose CLI keeps its own transcript adds nothing here: its
parser reads the file (``core/sources``), and the import registers it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from core import cursors, ids
from core.models import MAX_PAGE, Message, MessageCategory, MessagePage
from core.redact import redact
from core.store import Store, TranscriptFile

# Runners that start an agent CLI in the session's folder; the CLI keeps the transcript.
CLI_RUNNERS = frozenset(ids.RUNNER_SOURCES)
# How far back (pages of MAX_PAGE messages) an imported transcript is read for its
# newest compact summary (what a sub-agent starts with).
SUMMARY_PAGES = 50


@dataclass(frozen=True, slots=True)
class Found:
    """A message that holds the text looked for: the cursor of the page ending at it,
    and the cursor that searches on before it (None: nothing older to search)."""

    ending: str
    resume: str | None


class MessageSource(Protocol):
    """One session's messages, wherever they are kept."""

    @property
    def conversation_id(self) -> str: ...

    @property
    def kept_by_delegate(self) -> bool:
        """Whether delegate keeps the conversation itself (it may rewind or copy it)."""
        ...

    async def page(self, limit: int, cursor: str | None) -> MessagePage:
        """The ``limit`` newest messages before ``cursor`` (the end when None), newest
        first, masked; ``next_cursor`` pages back."""
        ...

    async def find(self, text: str, cursor: str | None) -> Found | None:
        """The newest message before ``cursor`` whose text holds ``text`` (case-insensitive)."""
        ...

    async def shared(self, categories: tuple[MessageCategory, ...], limit: int) -> list[Message]:
        """What a sub-agent of this session inherits, oldest first."""
        ...


@dataclass(frozen=True, slots=True)
class StoredMessages:
    """A conversation delegate stored itself, in its ``messages`` table."""

    store: Store
    conversation_id: str

    @property
    def kept_by_delegate(self) -> bool:
        return True

    async def page(self, limit: int, cursor: str | None) -> MessagePage:
        before = (
            cursors.decode_message_cursor(cursor, self.conversation_id)
            if cursor is not None
            else None
        )
        messages, nxt = await self.store.messages.recent(self.conversation_id, limit, before)
        return MessagePage(
            messages=messages,
            next_cursor=cursors.encode_message_cursor(nxt) if nxt else None,
        )

    async def find(self, text: str, cursor: str | None) -> Found | None:
        before = (
            cursors.decode_message_cursor(cursor, self.conversation_id).seq
            if cursor is not None
            else None
        )
        seq = await self.store.messages.find_before(self.conversation_id, text, before)
        if seq is None:
            return None
        cid = self.conversation_id
        return Found(
            ending=cursors.encode_message_cursor(cursors.MessageCursor(cid, seq + 1)),
            resume=cursors.encode_message_cursor(cursors.MessageCursor(cid, seq)),
        )

    async def shared(self, categories: tuple[MessageCategory, ...], limit: int) -> list[Message]:
        return await self.store.messages.in_categories(self.conversation_id, categories, limit)


@dataclass(frozen=True, slots=True)
class TranscriptMessages:
    """A conversation an agent CLI keeps in its transcript file, read as it is on disk.

    ``seq`` is the byte offset of a message's line; a cursor carries the offset of
    the oldest message shown (docs/import.md). Another program's file: every text
    is masked before it leaves here.
    """

    store: Store
    conversation_id: str
    transcript: TranscriptFile

    @property
    def kept_by_delegate(self) -> bool:
        return False

    async def page(self, limit: int, cursor: str | None) -> MessagePage:
        page = await self._raw_page(limit, cursor)
        return page.model_copy(
            update={"messages": [_masked(m) for m in page.messages]},
        )

    async def _raw_page(self, limit: int, cursor: str | None) -> MessagePage:
        # Deferred: only imported sessions need the transcript reader.
        from core.sources.preview import read_page

        before = self._offset(cursor)
        file = self.transcript
        try:
            page = await asyncio.to_thread(
                read_page,
                file.path,
                file.source,
                self.conversation_id,
                limit,
                before,
                file.prompts_in_items,
            )
        except OSError:  # the agent deleted or locked its transcript: nothing to show
            return MessagePage(messages=[], next_cursor=None)
        nxt = page.next_offset
        return MessagePage(
            messages=page.messages,
            next_cursor=self._cursor(nxt) if nxt is not None else None,
        )

    async def find(self, text: str, cursor: str | None) -> Found | None:
        from core.sources.transcript import find_before  # deferred like read_page

        before = self._offset(cursor)
        file = self.transcript
        try:
            found = await asyncio.to_thread(
                find_before,
                file.path,
                file.source,
                self.conversation_id,
                text,
                before,
                file.prompts_in_items,
            )
        except OSError:  # gone or locked since: nothing to find
            return None
        if found is None:
            return None
        return Found(
            ending=self._cursor(found.end),
            resume=self._cursor(found.offset) if found.offset > 0 else None,
        )

    async def shared(self, categories: tuple[MessageCategory, ...], limit: int) -> list[Message]:
        """What delegate gave it at launch (a capsule, a hand-off: kept as context beside
        the transcript) and its newest compact summary (the conversation as the agent
        keeps it; its instructions live in the agent's own files)."""
        carried = await self.store.messages.in_categories(
            self.conversation_id, (MessageCategory.CONTEXT,), limit
        )
        return carried + await self._newest_summary()

    async def _newest_summary(self) -> list[Message]:
        cursor: str | None = None
        for _page in range(SUMMARY_PAGES):
            page = await self._raw_page(MAX_PAGE, cursor)
            for message in page.messages:  # newest first
                if message.category is MessageCategory.CONTEXT:
                    return [_masked(message)]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return []

    def _offset(self, cursor: str | None) -> int | None:
        """The byte offset a cursor of this session carries (None: from the end)."""
        if cursor is None:
            return None
        return cursors.decode_transcript_cursor(cursor, self.conversation_id).offset

    def _cursor(self, offset: int) -> str:
        return cursors.encode_transcript_cursor(
            cursors.TranscriptCursor(self.conversation_id, offset)
        )


def _masked(message: Message) -> Message:
    return message.model_copy(update={"content": redact(message.content)})


async def message_source(store: Store, conversation_id: str) -> MessageSource:
    """The source of a session's messages (its full id, resolved already)."""
    transcript = await store.imports.transcript_for(conversation_id)
    if transcript is None:
        return StoredMessages(store, conversation_id)
    return TranscriptMessages(store, conversation_id, transcript)
