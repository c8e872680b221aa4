"""Sessions: reading the reusable pool (pages, filter, counts), re-keying one, and the
ids it had before (its aliases), which keep naming it.

Listing is keyset pagination on ``(last_interacted_at DESC, conversation_id
DESC)`` with a matching index; no OFFSET anywhere. Writes that start or end a
run live in :mod:`core.store.runs`; appends in :mod:`core.store.messages`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import aiosqlite

from core.cursors import SessionCursor
from core.errors import UnknownConversation
from core.models import (
    RunStatus,
    Session,
    SessionMode,
    SessionScope,
    SessionSort,
    SessionState,
)
from core.store.database import Database, id_chunks
from core.store.rows import clamp_count, clamp_int, session_columns, session_from_row, split_page
from core.store.scope import scope_where

# The paging queries of the default scope, named so the benchmark can EXPLAIN
# exactly what runs (tests/bench/bench_core.py): each must walk an index in
# order, never sort. Other scopes add conditions to the same walk.
_DEFAULT_WHERE, _ = scope_where(SessionScope(), "sessions")
_ACTIVITY_ORDER = "ORDER BY last_interacted_at DESC, conversation_id DESC"
_CREATED_ORDER = "ORDER BY created_at DESC, conversation_id DESC"
SQL_LIST_SESSIONS = (
    f"SELECT {session_columns()} FROM sessions WHERE {_DEFAULT_WHERE} {_ACTIVITY_ORDER} LIMIT ?"
)
SQL_LIST_SESSIONS_AFTER = (
    f"SELECT {session_columns()} FROM sessions WHERE {_DEFAULT_WHERE}"
    f" AND (last_interacted_at, conversation_id) < (?, ?) {_ACTIVITY_ORDER} LIMIT ?"
)
# A parent's sub-agents, oldest first: walks index sessions_children.
_CHILDREN_ORDER = "ORDER BY created_at, conversation_id"
# The filter of the picker: a case-folded substring of these fields, folded by
# Python's ``str.casefold`` (registered on the connections by core.store.database
# as ``casefold``; about as fast as SQLite's ASCII-only ``lower``), so ``ÜBER``
# finds ``über`` and ``strasse`` finds ``Straße``.
_MATCHES = (
    "instr(casefold(agent_id || ' ' || title || ' ' || coalesce(name, '') || ' ' || cwd"
    " || ' ' || coalesce(git_branch, '') || ' ' || conversation_id || ' ' || source), ?) > 0"
)
# The status panel's "fullest contexts": walks index sessions_fullest in order.
SQL_FULLEST_SESSIONS = (
    f"SELECT {session_columns()} FROM sessions WHERE context_limit > 0 AND archived_at IS NULL"
    " ORDER BY CAST(context_tokens AS REAL) / context_limit DESC, conversation_id LIMIT ?"
)
# Sessions and bytes by state outside the archive: counters kept by triggers
# (migrations 4 and 8).
SQL_COUNT_BY_STATE = "SELECT state, sessions, bytes FROM session_counts WHERE sessions > 0"
# Ids starting with a prefix: a range on the primary key.
SQL_IDS_WITH_PREFIX = (
    "SELECT conversation_id FROM sessions WHERE conversation_id >= ? AND conversation_id < ?"
    " ORDER BY conversation_id LIMIT ?"
)
# The session an id names: its own id first, else an id it had before a re-key.
SQL_CURRENT_ID = (
    "SELECT conversation_id, 0 AS rank FROM sessions WHERE conversation_id = ?1"
    " UNION ALL SELECT conversation_id, 1 AS rank FROM session_aliases WHERE alias = ?1"
    " ORDER BY rank LIMIT 1"
)
# Ids and old ids starting with a prefix, each with the id of its session now:
# ranges on both primary keys.
SQL_KEYS_WITH_PREFIX = (
    "SELECT conversation_id AS key, conversation_id FROM sessions"
    " WHERE conversation_id >= ?1 AND conversation_id < ?2"
    " UNION ALL SELECT alias AS key, conversation_id FROM session_aliases"
    " WHERE alias >= ?1 AND alias < ?2 ORDER BY key LIMIT ?3"
)

# States a session rests in between runs: linking it to a successor hands it off.
_RESTING = f"('{SessionState.IDLE.value}', '{SessionState.READY.value}')"

# A hand-off chain longer than this is cut (a loop in stored links never hangs a reader).
CHAIN_LIMIT = 1000

BeforeRead = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


class SessionsRepository:
    """The ``sessions`` table as the picker, the CLI and the tools read it.

    ``before_read`` runs before each listing, lookup and count: the store wires
    it to :meth:`RunsRepository.interrupt_dead_runs`, so a run whose owner died
    never shows as running.
    """

    def __init__(self, db: Database, before_read: BeforeRead = _nothing) -> None:
        self._db = db
        self._before_read = before_read

    async def get(self, conversation_id: str) -> Session:
        """One session; :class:`UnknownConversation` when there is none."""
        await self._before_read()
        row = await self._db.fetch_one(
            f"SELECT {session_columns()} FROM sessions WHERE conversation_id = ?",
            (conversation_id,),
        )
        if row is None:
            raise UnknownConversation(conversation_id)
        return session_from_row(row)

    async def get_many(
        self, conversation_ids: Sequence[str], active_since_us: int | None = None
    ) -> dict[str, Session]:
        """The sessions of ``conversation_ids`` that exist, by id, in the order asked;
        with ``active_since_us``, only those last active then or later.

        One read for a batch (an import's changes name thousands): the runs of
        dead owners are judged once, and the rows come in chunks of one query each.
        """
        await self._before_read()
        found: dict[str, Session] = {}
        wanted = list(dict.fromkeys(conversation_ids))
        since = "" if active_since_us is None else " AND last_interacted_at >= ?"
        extra = () if active_since_us is None else (active_since_us,)
        for chunk, marks in id_chunks(wanted):
            rows = await self._db.fetch_all(
                f"SELECT {session_columns()} FROM sessions"
                f" WHERE conversation_id IN ({marks}){since}",
                (*chunk, *extra),
            )
            for row in rows:
                session = session_from_row(row)
                found[session.conversation_id] = session
        return {cid: found[cid] for cid in wanted if cid in found}

    async def exists(self, conversation_id: str) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        )
        return row is not None

    async def page(
        self,
        limit: int,
        after: SessionCursor | None = None,
        query: str | None = None,
        scope: SessionScope | None = None,
    ) -> tuple[list[Session], SessionCursor | None]:
        """One page of the sessions ``scope`` covers, in its order; the cursor
        names the last row when more follow.

        ``query`` keeps sessions whose agent, title, name, cwd, branch or id
        contain it (case-insensitive); the walk still follows the order's index.
        """
        await self._before_read()
        scope = scope or SessionScope()
        if query is None and after is None and scope == SessionScope():
            return _page(await self._db.fetch_all(SQL_LIST_SESSIONS, (limit + 1,)), limit, scope)
        where, params = scope_where(scope, "sessions")
        if query:
            where += f" AND {_MATCHES}"
            params.append(query.casefold())
        created = scope.sort is SessionSort.CREATED
        if after is not None:
            key = "created_at" if created else "last_interacted_at"
            where += f" AND ({key}, conversation_id) < (?, ?)"
            params += [after.last_interacted_us, after.conversation_id]
        order = _CREATED_ORDER if created else _ACTIVITY_ORDER
        sql = f"SELECT {session_columns()} FROM sessions WHERE {where} {order} LIMIT ?"
        return _page(await self._db.fetch_all(sql, (*params, limit + 1)), limit, scope)

    async def children(
        self,
        parent_id: str,
        limit: int,
        after: SessionCursor | None = None,
        scope: SessionScope | None = None,
    ) -> tuple[list[Session], SessionCursor | None]:
        """A parent's sub-agents, oldest first; of ``scope`` only ``warmup`` applies
        (sub-agents go to and from the archive with their parent)."""
        await self._before_read()
        scope = scope or SessionScope()
        where = "parent_id = ?" + ("" if scope.warmup else " AND warmup = 0")
        params: list[object] = [parent_id]
        if after is not None:
            where += " AND (created_at, conversation_id) > (?, ?)"
            params += [after.last_interacted_us, after.conversation_id]
        sql = f"SELECT {session_columns()} FROM sessions WHERE {where} {_CHILDREN_ORDER} LIMIT ?"
        rows = await self._db.fetch_all(sql, (*params, limit + 1))
        return _page(rows, limit, SessionScope(sort=SessionSort.CREATED))

    async def count_matching(
        self, query: str | None = None, scope: SessionScope | None = None
    ) -> int:
        """How many sessions ``scope`` covers and ``query`` keeps."""
        where, params = scope_where(scope or SessionScope(), "sessions")
        if query:
            where += f" AND {_MATCHES}"
            params.append(query.casefold())
        row = await self._db.fetch_one(f"SELECT count(*) AS n FROM sessions WHERE {where}", params)
        return clamp_int(row["n"]) if row else 0

    async def fullest(self, limit: int) -> list[Session]:
        """Sessions whose context window is the most used, fullest first."""
        await self._before_read()
        rows = await self._db.fetch_all(SQL_FULLEST_SESSIONS, (limit,))
        return [session_from_row(r) for r in rows]

    async def count_by_state(self) -> dict[str, int]:
        """Reusable sessions by state, plus ``bytes`` (their total footprint)."""
        await self._before_read()
        rows = await self._db.fetch_all(SQL_COUNT_BY_STATE)
        counts = {str(r["state"]): clamp_count(r["sessions"]) for r in rows}
        counts["bytes"] = clamp_count(sum(clamp_count(r["bytes"]) for r in rows))
        return counts

    async def ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` ids that start with ``prefix``, in order (a range on the key).

        For resolving an id a person typed short: one result is a unique match,
        several are the candidates to show.
        """
        if not prefix or limit <= 0:
            return []
        rows = await self._db.fetch_all(SQL_IDS_WITH_PREFIX, (prefix, _past(prefix), limit))
        ids = [str(r["conversation_id"]) for r in rows]
        return [i for i in ids if i.startswith(prefix)]

    async def current_id(self, conversation_id: str) -> str | None:
        """The id of the session ``conversation_id`` names now, or None when it names none.

        A session's own id names it; so does every id it had before its agent
        re-keyed it (:meth:`rekey`), for as long as the session is stored. This
        and :meth:`keys_with_prefix` are where an id someone holds is resolved.
        """
        row = await self._db.fetch_one(SQL_CURRENT_ID, (conversation_id,))
        return None if row is None else str(row["conversation_id"])

    async def keys_with_prefix(self, prefix: str, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` ids and old ids starting with ``prefix``, in order, each as
        ``(key, id of its session now)``: a key that is a session's own id maps to itself."""
        if not prefix or limit <= 0:
            return []
        rows = await self._db.fetch_all(SQL_KEYS_WITH_PREFIX, (prefix, _past(prefix), limit))
        found = [(str(r["key"]), str(r["conversation_id"])) for r in rows]
        return [(key, cid) for key, cid in found if key.startswith(prefix)]

    async def link_continuation(self, old_id: str, new_id: str) -> None:
        """Record that ``old_id``'s work continues in ``new_id`` (a hand-off chain link).

        The old session is ``handed_off`` from then on (unless a run of it is in
        flight: that run's end sets its state; it stays linked). The new session
        takes the old one's title: it carries on the same work, and its own first
        prompt is only the text that primes it with the hand-off.
        """
        async with self._db.transaction() as db:
            cur = await db.execute(
                "UPDATE sessions SET continued_in = ?,"
                f" state = CASE WHEN state IN {_RESTING} THEN ? ELSE state END"
                " WHERE conversation_id = ?",
                (new_id, SessionState.HANDED_OFF.value, old_id),
            )
            if cur.rowcount != 1:
                raise UnknownConversation(old_id)
            cur = await db.execute(
                "UPDATE sessions SET continued_from = ?,"
                " title = (SELECT title FROM sessions WHERE conversation_id = ?)"
                " WHERE conversation_id = ?",
                (old_id, old_id, new_id),
            )
            if cur.rowcount != 1:
                raise UnknownConversation(new_id)

    async def unlink_continuation(self, old_id: str, new_id: str) -> None:
        """Undo :meth:`link_continuation` (the new session never started its work): the
        old session rests as it would after its last run again."""
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE sessions SET continued_in = NULL, state = CASE WHEN state = ? THEN"
                " (CASE WHEN mode = ? AND last_run_status = ? THEN ? ELSE ? END) ELSE state END"
                " WHERE conversation_id = ? AND continued_in = ?",
                (
                    SessionState.HANDED_OFF.value,
                    SessionMode.DETACHED.value,
                    RunStatus.COMPLETED.value,
                    SessionState.READY.value,
                    SessionState.IDLE.value,
                    old_id,
                    new_id,
                ),
            )
            await db.execute(
                "UPDATE sessions SET continued_from = NULL"
                " WHERE conversation_id = ? AND continued_from = ?",
                (new_id, old_id),
            )

    async def continuation_chain(self, conversation_id: str) -> list[str]:
        """Every session of ``conversation_id``'s hand-off chain, oldest first.

        Follows ``continued_from`` back and ``continued_in`` forward; a link to a
        session no longer stored ends the walk, and a loop in stored links never
        hangs it (each id is visited once, at most :data:`CHAIN_LIMIT`).
        """
        before = await self._walk(conversation_id, "continued_from")
        after = await self._walk(conversation_id, "continued_in")
        seen = set(after) | {conversation_id}
        older = [cid for cid in before if cid not in seen]
        return [*reversed(older), conversation_id, *after]

    async def newest_in_chain(self, conversation_id: str) -> str:
        """The session holding the work now: the end of ``continued_in`` links (or itself)."""
        after = await self._walk(conversation_id, "continued_in")
        return after[-1] if after else conversation_id

    async def _walk(self, conversation_id: str, link: str) -> list[str]:
        found: list[str] = []
        seen = {conversation_id}
        current = conversation_id
        while len(found) < CHAIN_LIMIT:
            row = await self._db.fetch_one(
                f"SELECT {link} FROM sessions WHERE conversation_id = ?", (current,)
            )
            following = None if row is None else row[0]
            if not following or following in seen or not await self.exists(following):
                return found
            seen.add(following)
            found.append(str(following))
            current = str(following)
        return found

    async def rekey(self, old_id: str, new_id: str) -> None:
        """Give a session the id its agent chose (Codex names its own threads).

        Sessions, messages, runs, context samples and crossings, checkpoints, the
        documents it wrote or read, the chain links and sub-agents naming it,
        compact returns and history move together in one transaction.
        The foreign keys have no ON UPDATE CASCADE, so their checks are deferred
        to the commit, by when every row points at the new id.

        ``old_id`` (and any id the session had before) stays an alias of the
        session: an id delegate printed names it for the session's life. A
        session an import already made of ``new_id``'s transcript (another
        process read the file while the launch ran) gives way: it only mirrors
        that file, which the next import reads again into this session.
        """
        if old_id == new_id:
            await self.get(old_id)  # nothing moves; an unknown id is still refused
            return
        async with self._db.transaction() as db:
            await db.execute("PRAGMA defer_foreign_keys = ON")
            await _give_way(db, new_id)
            cur = await db.execute(
                "UPDATE sessions SET conversation_id = ? WHERE conversation_id = ?",
                (new_id, old_id),
            )
            if cur.rowcount != 1:
                raise UnknownConversation(old_id)
            tables = ("messages", "runs", "context_samples", "context_crossings", "checkpoints")
            for table in tables:
                await db.execute(
                    f"UPDATE {table} SET conversation_id = ? WHERE conversation_id = ?",
                    (new_id, old_id),
                )
            await db.execute(
                "UPDATE document_consumers SET conversation_id = ? WHERE conversation_id = ?",
                (new_id, old_id),
            )
            await db.execute(
                "UPDATE documents SET source_session = ? WHERE source_session = ?",
                (new_id, old_id),
            )
            for link in ("continued_from", "continued_in", "forked_from", "parent_id"):
                # Links name sessions by id: they follow the session to its new one.
                await db.execute(
                    f"UPDATE sessions SET {link} = ? WHERE {link} = ?", (new_id, old_id)
                )
            await db.execute(
                "UPDATE return_steps SET conversation_id = ? WHERE conversation_id = ?",
                (new_id, old_id),
            )
            await db.execute(
                "UPDATE session_aliases SET conversation_id = ? WHERE conversation_id = ?",
                (new_id, old_id),
            )
            await db.execute("DELETE FROM session_aliases WHERE alias = ?", (new_id,))
            await db.execute(
                "INSERT OR REPLACE INTO session_aliases (alias, conversation_id) VALUES (?, ?)",
                (old_id, new_id),
            )
            await db.execute(
                "UPDATE history SET conversation_id = ?,"
                " payload = json_set(payload, '$.conversation_id', ?) WHERE conversation_id = ?",
                (new_id, new_id, old_id),
            )


def _past(prefix: str) -> str:
    """The first string past every string starting with ``prefix`` (a range's end)."""
    last = ord(prefix[-1])
    if last >= 0x10FFFF:
        return prefix + "\U0010ffff"  # nothing sorts after it but longer ids: filtered
    # UTF-8 keeps code point order, so this is the first string past the prefix.
    return prefix[:-1] + chr(last + 1 if last != 0xD7FF else 0xE000)


async def _give_way(db: aiosqlite.Connection, new_id: str) -> None:
    """Remove an imported session holding ``new_id`` so a re-key can take the id.

    Only a session that mirrors a transcript does: imported (not delegate's own),
    never run by delegate, not busy. Its index rows go too, so the next import
    reads the transcript whole into the session that takes the id. Anything else
    holding the id is left alone (the re-key then fails on the key).
    """
    rows = await db.execute_fetchall(
        "SELECT 1 FROM sessions WHERE conversation_id = ? AND source != 'delegate'"
        " AND state NOT IN ('running', 'pending')"
        " AND NOT EXISTS (SELECT 1 FROM runs WHERE conversation_id = ?)",
        (new_id, new_id),
    )
    if not list(rows):
        return
    await db.execute("DELETE FROM source_files WHERE conversation_id = ?", (new_id,))
    await db.execute("DELETE FROM sessions WHERE conversation_id = ?", (new_id,))


def _page(
    rows: list[aiosqlite.Row], limit: int, scope: SessionScope
) -> tuple[list[Session], SessionCursor | None]:
    """Rows fetched with ``LIMIT limit + 1``: the page and, when more follow, its cursor."""
    kept, last = split_page(rows, limit)
    sessions = [session_from_row(r) for r in kept]
    if last is None:
        return sessions, None
    key = "created_at" if scope.sort is SessionSort.CREATED else "last_interacted_at"
    # The cursor keeps the stored sort key as is (not the clamped datetime), so
    # the next page starts exactly after this row.
    return sessions, SessionCursor(clamp_int(last[key]), str(last["conversation_id"]), scope.sort)
