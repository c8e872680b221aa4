"""The database's two connections: transactions that always end, reads that never wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    opened = await Store.open(tmp_path / "store.sqlite3")
    yield opened  # type: ignore[misc]
    await opened.close()


async def _sessions(store: Store) -> list[str]:
    sessions, _ = await store.sessions.page(100)
    return sorted(s.conversation_id for s in sessions)


@pytest.mark.parametrize("steps_before_cancel", range(24))
async def test_a_cancelled_transaction_never_stays_open(
    store: Store, steps_before_cancel: int
) -> None:
    """Cancel a writer at every await point: the next transaction still starts and ends."""

    async def insert() -> None:
        await store.bulk.insert([finished("c1", BASE_US, messages=3)])

    task = asyncio.create_task(insert())
    for _ in range(steps_before_cancel):
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    # Whatever was cut, the writer is free and in autocommit: this commits.
    await store.bulk.insert([finished("c2", BASE_US + 1)])
    ids = await _sessions(store)
    assert "c2" in ids
    # All or nothing: c1 is either whole or absent.
    if "c1" in ids:
        assert (await store.sessions.get("c1")).metrics.messages == 3
    assert store.db._writer is not None
    assert not store.db._writer.in_transaction


async def test_reads_do_not_wait_for_an_open_transaction(store: Store) -> None:
    """A preview or a status scan reads a snapshot while a writer holds its transaction."""
    await store.bulk.insert([finished("before", BASE_US)])
    inside, release = asyncio.Event(), asyncio.Event()

    async def slow_writer() -> None:
        async with store.db.transaction() as db:
            await db.execute(
                "UPDATE sessions SET title = 'uncommitted' WHERE conversation_id = 'before'"
            )
            inside.set()
            await release.wait()

    writer = asyncio.create_task(slow_writer())
    await inside.wait()
    # The read runs on the other connection: neither blocked nor seeing the open write.
    session = await asyncio.wait_for(store.sessions.get("before"), timeout=5)
    assert session.title == "session before"
    assert (await asyncio.wait_for(store.sessions.count_by_state(), timeout=5))["idle"] == 1
    release.set()
    await writer
    assert (await store.sessions.get("before")).title == "uncommitted"
