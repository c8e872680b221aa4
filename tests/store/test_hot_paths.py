"""Hot paths answered by indexes or counters, never by scanning sessions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.models import SessionState
from core.store import Store
from core.store.sessions import (
    SQL_COUNT_BY_STATE,
    SQL_FULLEST_SESSIONS,
    SQL_IDS_WITH_PREFIX,
)

RUN_FINISH = (
    "UPDATE sessions SET state = 'idle', active_run_id = NULL, last_run_status = 'completed'"
    " WHERE conversation_id = ? AND active_run_id = ?"
)
IN_FLIGHT = (
    "SELECT s.conversation_id FROM sessions s JOIN runs r ON r.run_id = s.active_run_id"
    " WHERE s.active_run_id IS NOT NULL"
)


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    opened = await Store.open(tmp_path / "store.sqlite3")
    await opened.bulk.insert([finished(f"c{i:03}", BASE_US + i, messages=0) for i in range(200)])
    yield opened  # type: ignore[misc]
    await opened.close()


def _plan(store: Store, sql: str, params: tuple[object, ...]) -> str:
    with sqlite3.connect(store.path) as db:
        db.create_function("casefold", 1, str.casefold)
        db.execute("ANALYZE")
        return " | ".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (RUN_FINISH, ("c001", "r1"), "SEARCH sessions USING INDEX sqlite_autoindex_sessions_1"),
        (SQL_FULLEST_SESSIONS, (3,), "SCAN sessions USING INDEX sessions_fullest"),
        (SQL_COUNT_BY_STATE, (), "SCAN session_counts"),
        (SQL_IDS_WITH_PREFIX, ("c01", "c02", 5), "SEARCH sessions USING COVERING INDEX"),
        (IN_FLIGHT, (), "SEARCH s USING INDEX sessions_in_flight"),
    ],
    ids=["run-finish", "fullest", "count-by-state", "id-prefix", "in-flight"],
)
async def test_hot_paths_use_an_index(
    store: Store, sql: str, params: tuple[object, ...], expected: str
) -> None:
    plan = _plan(store, sql, params)
    assert expected in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # no sort
    steps = plan.split(" | ")
    assert "SCAN sessions" not in steps, plan  # no full table scan
    assert "SCAN s" not in steps, plan


async def test_state_counters_follow_every_write(store: Store) -> None:
    async def truth() -> dict[str, int]:
        rows = await store.db.fetch_all(
            "SELECT state, count(*) AS n, total(bytes_on_disk) AS b FROM sessions"
            " WHERE archived_at IS NULL GROUP BY state"
        )
        counts = {str(r["state"]): int(r["n"]) for r in rows}
        counts["bytes"] = int(sum(r["b"] for r in rows))
        return counts

    assert await store.sessions.count_by_state() == await truth() == {"idle": 200, "bytes": 0}
    await store.bulk.insert([finished("big", BASE_US + 999, messages=4)])
    assert await store.sessions.count_by_state() == await truth()
    await store.tombstones.purge("c000", BASE_US, force=True)
    async with store.db.transaction() as db:
        await db.execute("UPDATE sessions SET state = 'ready' WHERE conversation_id = 'c001'")
    await store.sessions.rekey("c002", "c002-new")
    counts = await store.sessions.count_by_state()
    assert counts == await truth()
    assert counts[SessionState.IDLE] == 199
    # The archive is not counted; back from it, counted again.
    await store.archive.archive("big", BASE_US)
    assert await store.sessions.count_by_state() == await truth()
    assert (await store.sessions.count_by_state())["bytes"] == 0
    await store.archive.restore("big")
    assert await store.sessions.count_by_state() == counts
    assert counts[SessionState.READY] == 1
    assert counts["bytes"] > 0


async def test_id_prefixes(store: Store) -> None:
    await store.bulk.insert(
        [
            finished("019a2b3c-aaaa", BASE_US, messages=0),
            finished("019a2b3c-aaab", BASE_US, messages=0),
            finished("019a2b3d-0000", BASE_US, messages=0),
            finished("ü-prefix-1", BASE_US, messages=0),
        ]
    )
    assert await store.sessions.ids_with_prefix("019a2b3c", 10) == [
        "019a2b3c-aaaa",
        "019a2b3c-aaab",
    ]
    assert await store.sessions.ids_with_prefix("019a2b3d", 10) == ["019a2b3d-0000"]
    assert await store.sessions.ids_with_prefix("019a2b", 2) == ["019a2b3c-aaaa", "019a2b3c-aaab"]
    assert await store.sessions.ids_with_prefix("ü-pre", 10) == ["ü-prefix-1"]
    assert await store.sessions.ids_with_prefix("019a2b3e", 10) == []
    assert await store.sessions.ids_with_prefix("%", 10) == []
    assert await store.sessions.ids_with_prefix("", 10) == []
