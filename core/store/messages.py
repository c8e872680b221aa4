"""Messages delegate stores itself, and the session metrics they keep current.

Each append updates the session's shadow metrics (turns, messages, tokens,
bytes, context tokens) in the same transaction, so listing never aggregates.
Imported sessions keep their messages in the agent's own transcript file
(core.sources.preview reads it); none of them are here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import aiosqlite

from core.cursors import MessageCursor
from core.errors import UnknownConversation
from core.models import Message, MessageCategory, Role
from core.store.database import Database, first_row
from core.store.rows import (
    MESSAGE_COLUMNS,
    NewMessage,
    clamp_count,
    message_from_row,
    split_page,
)

SQL_RECENT_MESSAGES = (
    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?"
)
SQL_RECENT_MESSAGES_BEFORE = (
    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?"
)


class MessagesRepository:
    """The ``messages`` table: append in order, page newest first on ``seq``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(self, conversation_id: str, messages: Sequence[NewMessage]) -> list[int]:
        """Append messages in one transaction (see :meth:`append_in`); their ``seq``s."""
        async with self._db.transaction() as db:
            return await self.append_in(db, conversation_id, messages)

    async def correct_counts_in(
        self, db: aiosqlite.Connection, conversation_id: str, corrections: Sequence[tuple[int, int]]
    ) -> None:
        """Inside the caller's transaction: messages stored with an estimated count get
        their exact one (``(seq, exact - estimate)``), and the session's totals and
        context move by the same amounts."""
        if not corrections:
            return
        await db.executemany(
            "UPDATE messages SET token_count = max(0, token_count + ?)"
            " WHERE conversation_id = ? AND seq = ?",
            [(delta, conversation_id, seq) for seq, delta in corrections],
        )
        delta = sum(d for _, d in corrections)
        await db.execute(
            "UPDATE sessions SET token_count = max(0, token_count + ?),"
            " context_tokens = max(0, context_tokens + ?) WHERE conversation_id = ?",
            (delta, delta, conversation_id),
        )

    async def append_in(
        self, db: aiosqlite.Connection, conversation_id: str, messages: Sequence[NewMessage]
    ) -> list[int]:
        """Append inside the caller's open transaction, numbering them after the last;
        the ``seq`` each got."""
        if not messages:
            return []
        row = first_row(
            await db.execute_fetchall(
                "UPDATE sessions SET next_seq = next_seq + ?, message_count = message_count + ?,"
                " token_count = token_count + ?, bytes_on_disk = bytes_on_disk + ?,"
                " turns = turns + ?, context_tokens = context_tokens + ?"
                " WHERE conversation_id = ? RETURNING next_seq",
                (
                    len(messages),
                    len(messages),
                    sum(m.token_count for m in messages),
                    sum(m.size_bytes for m in messages),
                    # A turn is a prompt: context shared with a sub-agent is not one.
                    sum(
                        1
                        for m in messages
                        if m.role is Role.USER and m.stored_category is MessageCategory.DIALOG
                    ),
                    sum(m.token_count for m in messages),
                    conversation_id,
                ),
            )
        )
        if row is None:
            raise UnknownConversation(conversation_id)
        first_seq = int(row["next_seq"]) - len(messages)
        await db.executemany(
            f"INSERT INTO messages({MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    m.id,
                    conversation_id,
                    first_seq + i,
                    m.role.value,
                    m.content,
                    m.created_us,
                    m.token_count,
                    json.dumps(m.tool) if m.tool else None,
                    m.run_id,
                    m.stored_category.value,
                )
                for i, m in enumerate(messages)
            ],
        )
        return [first_seq + i for i in range(len(messages))]

    async def count_turn_in(self, db: aiosqlite.Connection, conversation_id: str) -> None:
        """Count a turn whose prompt an agent keeps in its own transcript (a real CLI)."""
        await db.execute(
            "UPDATE sessions SET turns = turns + 1 WHERE conversation_id = ?", (conversation_id,)
        )

    async def find_before(self, conversation_id: str, text: str, before: int | None) -> int | None:
        """``seq`` of the newest message before ``before`` whose content holds ``text``
        (case-insensitive for ASCII letters, as SQLite's ``lower``), or None."""
        row = await self._db.fetch_one(
            "SELECT seq FROM messages WHERE conversation_id = ? AND seq < ?"
            " AND instr(lower(content), lower(?)) > 0 ORDER BY seq DESC LIMIT 1",
            (conversation_id, before if before is not None else 2**63 - 1, text),
        )
        return int(row["seq"]) if row is not None else None

    async def in_categories(
        self, conversation_id: str, categories: Sequence[MessageCategory], limit: int
    ) -> list[Message]:
        """The first ``limit`` messages of these categories, oldest first.

        Notes delegate wrote about a run (a system message of that run: its
        error) are not the conversation's instructions and are left out.
        """
        marks = ", ".join("?" for _ in categories)
        rows = await self._db.fetch_all(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?"
            f" AND category IN ({marks}) AND NOT (role = 'system' AND run_id IS NOT NULL)"
            " ORDER BY seq LIMIT ?",
            (conversation_id, *(c.value for c in categories), limit),
        )
        return [message_from_row(r) for r in rows]

    async def tokens_by_category(self, conversation_id: str) -> dict[str, int]:
        """The session's stored tokens summed by message category (known categories only)."""
        rows = await self._db.fetch_all(
            "SELECT category, sum(token_count) AS tokens FROM messages"
            " WHERE conversation_id = ? GROUP BY category",
            (conversation_id,),
        )
        known = {c.value for c in MessageCategory}
        return {
            str(r["category"]): clamp_count(r["tokens"])
            for r in rows
            if str(r["category"]) in known
        }

    async def recent(
        self, conversation_id: str, limit: int, before: MessageCursor | None = None
    ) -> tuple[list[Message], MessageCursor | None]:
        """Newest first; pass the returned cursor to page back to older messages."""
        if before is None:
            sql = SQL_RECENT_MESSAGES
            params: tuple[object, ...] = (conversation_id, limit + 1)
        else:
            sql = SQL_RECENT_MESSAGES_BEFORE
            params = (conversation_id, before.seq, limit + 1)
        rows = await self._db.fetch_all(sql, params)
        if not rows and not await self._db.fetch_one(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ):
            raise UnknownConversation(conversation_id)
        kept, last = split_page(rows, limit)
        messages = [message_from_row(r) for r in kept]
        if last is None:
            return messages, None
        return messages, MessageCursor(conversation_id, messages[-1].seq)
