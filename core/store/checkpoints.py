"""Checkpoints: a mark in a session at one message, to restore to or fork from.

A fork copies a session's messages up to the mark into a new session
(``forked_from``). Restoring rewinds one of delegate's own sessions to a mark
and loses nothing: the whole conversation as it was is first copied into a
saved session (archived, ``forked_from`` the session) with a checkpoint at its
end, so restoring that checkpoint *into* the session undoes the rewind.
Everything happens in one transaction; another tool's transcript is never
touched (only delegate's own ``messages`` rows are read and written).
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from core.errors import UnknownCheckpoint, UnknownConversation
from core.models import Checkpoint, Session
from core.store.database import Database, first_row
from core.store.rows import clamp_int, clamp_time, session_columns, session_from_row

_COLUMNS = "checkpoint_id, conversation_id, seq, label, created_at"
MAX_LISTED = 500
"""Checkpoints listed per session, at most (oldest first)."""


@dataclass(frozen=True, slots=True)
class NewCheckpoint:
    checkpoint_id: str
    conversation_id: str
    seq: int
    label: str
    created_us: int


@dataclass(frozen=True, slots=True)
class SessionCopy:
    """A new session made from another's messages up to ``upto_seq`` (a fork, a saved state)."""

    conversation_id: str
    title: str
    created_us: int
    archived: bool = False


class CheckpointsRepository:
    """The ``checkpoints`` table, and the session copies forks and restores make."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, checkpoint: NewCheckpoint) -> Checkpoint:
        async with self._db.transaction() as db:
            await _insert(db, checkpoint)
        return await self.get(checkpoint.checkpoint_id)

    async def get(self, checkpoint_id: str) -> Checkpoint:
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        )
        if row is None:
            raise UnknownCheckpoint(f"no checkpoint with id {checkpoint_id!r}")
        return _checkpoint(row)

    async def ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = await self._db.fetch_all(
            "SELECT checkpoint_id FROM checkpoints WHERE checkpoint_id >= ?"
            " AND checkpoint_id < ? ORDER BY checkpoint_id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [str(r[0]) for r in rows]

    async def for_session(
        self, conversation_id: str, limit: int | None = MAX_LISTED
    ) -> list[Checkpoint]:
        """A session's checkpoints, oldest first (``limit`` None: every one)."""
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE conversation_id = ?"
            " ORDER BY created_at, checkpoint_id LIMIT ?",
            (conversation_id, -1 if limit is None else limit),
        )
        return [_checkpoint(r) for r in rows]

    async def has_message(self, conversation_id: str, seq: int) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM messages WHERE conversation_id = ? AND seq = ?", (conversation_id, seq)
        )
        return row is not None

    async def last_seq(self, conversation_id: str) -> int | None:
        """The newest stored message's ``seq`` (None: nothing stored)."""
        row = await self._db.fetch_one(
            "SELECT max(seq) AS last FROM messages WHERE conversation_id = ?", (conversation_id,)
        )
        return None if row is None or row["last"] is None else clamp_int(row["last"])

    async def fork(self, source: Checkpoint, copy: SessionCopy) -> Session:
        """A new idle session holding the source's messages up to the mark."""
        async with self._db.transaction() as db:
            await _copy_session(db, source.conversation_id, source.seq, copy)
            return await _session(db, copy.conversation_id)

    async def restore(
        self,
        target_id: str,
        source: Checkpoint,
        saved: SessionCopy,
        undo: NewCheckpoint,
        at_us: int,
    ) -> Session:
        """Rewind ``target_id`` to ``source``'s mark (its own, or another session's).

        First the target's whole conversation is copied into ``saved`` (archived)
        with ``undo`` marking its end: restoring ``undo`` into the target puts
        everything back. The target's checkpoints past its new end move to the
        saved copy, where their messages are.
        """
        async with self._db.transaction() as db:
            await _copy_session(db, target_id, None, saved)
            await _insert(db, undo)
            await db.execute(
                "UPDATE checkpoints SET conversation_id = ? WHERE conversation_id = ?"
                " AND seq > ? AND checkpoint_id != ?",
                (saved.conversation_id, target_id, source.seq, source.checkpoint_id)
                if source.conversation_id == target_id
                else (saved.conversation_id, target_id, -1, ""),
            )
            if source.conversation_id == target_id:
                await _drop_after(db, target_id, source.seq)
            else:
                await _drop_after(db, target_id, -1)
                await _copy_messages(db, source.conversation_id, target_id, source.seq)
            await _recount(db, target_id)
            await db.execute(
                "UPDATE sessions SET last_interacted_at = ? WHERE conversation_id = ?",
                (at_us, target_id),
            )
            return await _session(db, target_id)


async def _insert(db: aiosqlite.Connection, checkpoint: NewCheckpoint) -> None:
    await db.execute(
        f"INSERT INTO checkpoints({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
        (
            checkpoint.checkpoint_id,
            checkpoint.conversation_id,
            checkpoint.seq,
            checkpoint.label,
            checkpoint.created_us,
        ),
    )


async def _session(db: aiosqlite.Connection, conversation_id: str) -> Session:
    row = first_row(
        await db.execute_fetchall(
            f"SELECT {session_columns()} FROM sessions WHERE conversation_id = ?",
            (conversation_id,),
        )
    )
    if row is None:
        raise UnknownConversation(conversation_id)
    return session_from_row(row)


async def _copy_session(
    db: aiosqlite.Connection, source_id: str, upto_seq: int | None, copy: SessionCopy
) -> None:
    """A new idle session like ``source_id`` (agent, folder, window), ``forked_from`` it,
    with its messages up to ``upto_seq`` (None: all)."""
    cursor = await db.execute(
        "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch, title,"
        " source, created_at, last_interacted_at, context_limit, model, window_source,"
        " clamped_from, forked_from, archived_at, last_run_status)"
        " SELECT ?, agent_id, 'standard', 'idle', cwd, git_branch, ?, 'delegate', ?, ?,"
        " context_limit, model, window_source, clamped_from, conversation_id, ?, 'completed'"
        " FROM sessions WHERE conversation_id = ?",
        (
            copy.conversation_id,
            copy.title,
            copy.created_us,
            copy.created_us,
            copy.created_us if copy.archived else None,
            source_id,
        ),
    )
    if cursor.rowcount != 1:
        raise UnknownConversation(source_id)
    await _copy_messages(db, source_id, copy.conversation_id, upto_seq)
    await _recount(db, copy.conversation_id)


async def _copy_messages(
    db: aiosqlite.Connection, source_id: str, target_id: str, upto_seq: int | None
) -> None:
    """Append the source's messages up to ``upto_seq`` to the target, same numbers
    (the target holds none past its kept part). The search index follows (trigger)."""
    await db.execute(
        "INSERT INTO messages(conversation_id, seq, id, role, content, created_at, token_count,"
        " tool, run_id, category) SELECT ?, seq, id, role, content, created_at, token_count,"
        " tool, NULL, category FROM messages WHERE conversation_id = ? AND seq <= ?"
        " ORDER BY seq",
        (target_id, source_id, upto_seq if upto_seq is not None else 2**63 - 1),
    )


async def _drop_after(db: aiosqlite.Connection, conversation_id: str, seq: int) -> None:
    """Remove the messages after ``seq``, and their words from the search index."""
    row = first_row(
        await db.execute_fetchall(
            "SELECT created_at FROM messages WHERE conversation_id = ? AND seq = ?",
            (conversation_id, seq),
        )
    )
    kept_until = clamp_int(row["created_at"]) if row is not None else -(2**63)
    await db.execute(
        "DELETE FROM messages WHERE conversation_id = ? AND seq > ?", (conversation_id, seq)
    )
    await db.execute(
        "DELETE FROM search_docs WHERE conversation_id = ? AND origin = 0"
        " AND kind IN ('user', 'assistant') AND at > ?",
        (conversation_id, kept_until),
    )


async def _recount(db: aiosqlite.Connection, conversation_id: str) -> None:
    """The session's shadow metrics from the messages it holds now."""
    await db.execute(
        "UPDATE sessions SET"
        " message_count = m.n, token_count = m.tokens, context_tokens = m.tokens,"
        " bytes_on_disk = m.bytes, turns = m.turns, next_seq = m.next_seq"
        " FROM (SELECT count(*) AS n, coalesce(sum(token_count), 0) AS tokens,"
        "   coalesce(sum(length(CAST(content AS BLOB)) + coalesce(length(CAST(tool AS BLOB)), 0)),"
        "     0) AS bytes,"
        "   count(*) FILTER (WHERE role = 'user' AND category = 'dialog') AS turns,"
        "   coalesce(max(seq), -1) + 1 AS next_seq"
        "   FROM messages WHERE conversation_id = ?1) AS m"
        " WHERE conversation_id = ?1",
        (conversation_id,),
    )


def _checkpoint(row: aiosqlite.Row) -> Checkpoint:
    return Checkpoint(
        checkpoint_id=str(row["checkpoint_id"]),
        conversation_id=str(row["conversation_id"]),
        seq=clamp_int(row["seq"]),
        label=str(row["label"] or ""),
        created_at=clamp_time(row["created_at"]),
    )
