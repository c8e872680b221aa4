"""The store's change feed and leases: what another connection changed, read cheaply."""

from __future__ import annotations

from pathlib import Path

from support import BASE_US, finished

from core.config import DB_FILENAME
from core.orchestrator import AgentOrchestrator
from core.store import Store


async def test_data_version_moves_only_when_another_connection_commits(data_dir: Path) -> None:
    async with _two_stores(data_dir) as (watcher, writer):
        before = await watcher.changes.data_version()
        assert await watcher.changes.data_version() == before  # reading changes nothing
        await writer.bulk.insert([finished("c1", BASE_US)])
        assert await watcher.changes.data_version() != before


async def test_since_reports_added_changed_and_removed_sessions_and_runs(data_dir: Path) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        watcher = await Store.open(data_dir / DB_FILENAME)
        try:
            start = await watcher.changes.head()
            assert (await watcher.changes.since(start)).empty

            (handle,) = await orch.delegate("hello", agent_id="echo", cwd=str(data_dir))
            run = await handle.wait()
            added = await watcher.changes.since(start)
            assert added.sessions == (run.conversation_id,)
            assert added.runs == (run.run_id,)
            assert [h.event.kind for h in added.history] == [
                "delegate_launched",
                "delegate_finished",
            ]
            assert (await watcher.changes.since(added.cursor)).empty

            await orch.dismiss(run.conversation_id)
            gone = await watcher.changes.since(added.cursor)
            assert gone.removed == (run.conversation_id,)
            assert gone.sessions == ()
            assert [h.event.kind for h in gone.history] == ["session_dismissed"]
        finally:
            await watcher.close()
    finally:
        await orch.close()


async def test_a_rekeyed_session_is_removed_under_its_old_id(data_dir: Path) -> None:
    async with _two_stores(data_dir) as (watcher, writer):
        await writer.bulk.insert([finished("old", BASE_US)])
        cursor = await watcher.changes.head()
        await writer.sessions.rekey("old", "new")
        moved = await watcher.changes.since(cursor)
        assert moved.removed == ("old",)
        assert moved.sessions == ("new",)


async def test_history_rows_carry_the_process_that_stored_them(data_dir: Path) -> None:
    from core.store.history import this_process

    async with _two_stores(data_dir) as (watcher, writer):
        cursor = await watcher.changes.head()
        await writer.history.add(BASE_US, "session_dismissed", "c1", None, {"kind": "x"})
        found = await watcher.changes.since(cursor)
        # A payload that is not a known event is skipped, the cursor still moves past it.
        assert found.history == ()
        assert found.cursor.history_id > cursor.history_id
        origin = await watcher.db.fetch_one("SELECT origin FROM history")
        assert origin is not None
        assert origin[0] == this_process()


async def test_a_lease_has_one_holder_until_it_expires_or_is_released(data_dir: Path) -> None:
    async with _two_stores(data_dir) as (one, two):
        assert await one.leases.acquire("supervisor", "a", now_us=1_000, ttl_us=100)
        assert not await two.leases.acquire("supervisor", "b", now_us=1_050, ttl_us=100)
        assert await one.leases.acquire("supervisor", "a", now_us=1_090, ttl_us=100)  # renewed
        assert not await two.leases.acquire("supervisor", "b", now_us=1_150, ttl_us=100)
        assert await two.leases.acquire("supervisor", "b", now_us=1_190, ttl_us=100)  # expired
        assert await one.leases.holder("supervisor", now_us=1_200) == "b"
        await one.leases.release("supervisor", "a")  # not a's: left alone
        assert await one.leases.holder("supervisor", now_us=1_200) == "b"
        await two.leases.release("supervisor", "b")
        assert await one.leases.acquire("supervisor", "a", now_us=1_200, ttl_us=100)


class _two_stores:  # reads as a context manager
    """Two stores on one file: two connections, as two processes would have."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / DB_FILENAME
        self.stores: list[Store] = []

    async def __aenter__(self) -> tuple[Store, Store]:
        self.stores = [await Store.open(self.path), await Store.open(self.path)]
        return self.stores[0], self.stores[1]

    async def __aexit__(self, *exc: object) -> None:
        for store in self.stores:
            await store.close()


async def test_the_feed_reads_only_rows_past_the_cursor_through_indexes(data_dir: Path) -> None:
    import sqlite3

    from core.store.changes import _SQL_CHANGED

    async with _two_stores(data_dir) as (_, writer):
        await writer.bulk.insert([finished(f"c{i:03}", BASE_US + i) for i in range(200)])
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute("ANALYZE")
        plan = " | ".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {_SQL_CHANGED}", (150,)))
    assert "SEARCH sessions USING INDEX sessions_by_change" in plan, plan
    assert "SEARCH runs USING INDEX runs_by_change" in plan, plan
    assert "SCAN" not in plan, plan
