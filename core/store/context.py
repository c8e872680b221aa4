"""Context figures over time: per-turn samples (the trend) and threshold crossings.

A sample is written whenever a session's context figure is updated (a run of
ours closed, an imported transcript grew); ``tokens_per_turn`` on the session
is kept from them, never recomputed on read. A crossing is recorded once per
level per session: :meth:`ContextRepository.record_crossing` says whether this
call was the first, so a threshold is acted on once, across restarts.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import aiosqlite

from core.models import ContextLevel, SessionState, ThresholdCrossing
from core.store.database import Database, first_row
from core.store.rows import clamp_count, clamp_time

TREND_TURNS = 20
"""Samples kept per session (older turns are dropped as new ones arrive)."""
RATE_TURNS = 5
"""Turns the tokens-per-turn rate averages over."""
_BUSY = (SessionState.RUNNING.value, SessionState.PENDING.value)


class ContextRepository:
    """The ``context_samples`` and ``context_crossings`` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record_sample(
        self, conversation_id: str, turn: int, used_tokens: int, limit_tokens: int, at_us: int
    ) -> None:
        """Remember the context at ``turn`` (the latest figure of that turn wins), keep
        the last ``TREND_TURNS``, and update the session's ``tokens_per_turn``."""
        async with self._db.transaction() as db:
            await record_samples_in(db, conversation_id, [(turn, used_tokens)], limit_tokens, at_us)

    async def trend(self, conversation_id: str, limit: int = TREND_TURNS) -> list[int]:
        """Context in use at each recent turn, oldest first."""
        rows = await self._db.fetch_all(
            "SELECT used_tokens FROM context_samples WHERE conversation_id = ?"
            " ORDER BY turn DESC LIMIT ?",
            (conversation_id, limit),
        )
        return [clamp_count(r[0]) for r in reversed(rows)]

    async def record_crossing(
        self,
        conversation_id: str,
        level: ContextLevel,
        used_tokens: int,
        limit_tokens: int,
        at_us: int,
    ) -> bool:
        """Record that ``level`` was crossed; True only for the first record of that level."""
        async with self._db.transaction() as db:
            cursor = await db.execute(
                "INSERT OR IGNORE INTO context_crossings"
                "(conversation_id, level, used_tokens, limit_tokens, crossed_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (conversation_id, level.value, used_tokens, limit_tokens, at_us),
            )
            return cursor.rowcount == 1

    async def crossings(self, conversation_id: str) -> list[ThresholdCrossing]:
        """The levels this session crossed, in the order they were crossed."""
        rows = await self._db.fetch_all(
            "SELECT level, used_tokens, limit_tokens, crossed_at FROM context_crossings"
            " WHERE conversation_id = ? ORDER BY crossed_at, level",
            (conversation_id,),
        )
        levels = {level.value: level for level in ContextLevel}
        return [
            ThresholdCrossing(
                level=levels[str(r["level"])],
                used_tokens=clamp_count(r["used_tokens"]),
                limit_tokens=clamp_count(r["limit_tokens"]),
                crossed_at=clamp_time(r["crossed_at"]),
            )
            for r in rows
            if str(r["level"]) in levels
        ]


async def record_samples_in(
    db: aiosqlite.Connection,
    conversation_id: str,
    samples: Sequence[tuple[int, int]],
    limit_tokens: int,
    at_us: int,
    *,
    replace: bool = False,
    unless_busy: bool = False,
) -> None:
    """:meth:`ContextRepository.record_sample` for several ``(turn, used)`` at once, inside
    the caller's transaction (an import stores its sessions and their samples together).

    ``replace``: the samples are the whole trend (a transcript read again from its
    start): older ones go. ``unless_busy``: a session a run holds now gets none (its
    run's close samples it). A session not stored gets none.
    """
    if not samples:
        return
    if unless_busy:
        row = first_row(
            await db.execute_fetchall(
                "SELECT state FROM sessions WHERE conversation_id = ?", (conversation_id,)
            )
        )
        if row is None or str(row["state"]) in _BUSY:
            return
    if replace:
        await db.execute(
            "DELETE FROM context_samples WHERE conversation_id = ?", (conversation_id,)
        )
    await db.executemany(
        "INSERT INTO context_samples(conversation_id, turn, used_tokens, limit_tokens, at)"
        " SELECT ?1, ?2, ?3, ?4, ?5"
        " WHERE EXISTS (SELECT 1 FROM sessions WHERE conversation_id = ?1)"
        " ON CONFLICT (conversation_id, turn) DO UPDATE SET"
        " used_tokens = excluded.used_tokens, limit_tokens = excluded.limit_tokens,"
        " at = excluded.at",
        [(conversation_id, turn, used, limit_tokens, at_us) for turn, used in samples],
    )
    newest = max(turn for turn, _used in samples)
    await db.execute(
        "DELETE FROM context_samples WHERE conversation_id = ? AND turn <= ?",
        (conversation_id, newest - TREND_TURNS),
    )
    rows = await db.execute_fetchall(
        "SELECT turn, used_tokens FROM context_samples WHERE conversation_id = ?"
        " ORDER BY turn DESC LIMIT ?",
        (conversation_id, RATE_TURNS + 1),
    )
    await db.execute(
        "UPDATE sessions SET tokens_per_turn = ? WHERE conversation_id = ?",
        (_rate([(int(r[0]), int(r[1])) for r in rows]), conversation_id),
    )


def _rate(samples: list[tuple[int, int]]) -> int:
    """Average growth per turn over the newest samples (newest first); 0 without two.

    A compaction shrinks the context: growth is counted only where it grew.
    """
    if len(samples) < 2:
        return 0
    growth = [max(0, newer[1] - older[1]) for newer, older in itertools.pairwise(samples)]
    turns = max(1, samples[0][0] - samples[-1][0])
    return sum(growth) // turns
