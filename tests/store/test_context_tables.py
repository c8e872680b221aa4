"""Context samples, threshold crossings and the documents registry (migration 11)."""

from __future__ import annotations

from pathlib import Path

from support import BASE_US, finished

from core.config import DB_FILENAME
from core.models import ContextLevel, DocumentKind, DocumentStatus
from core.store import NewDocument, Store
from core.store.context import TREND_TURNS


async def _store(data_dir: Path) -> Store:
    store = await Store.open(data_dir / DB_FILENAME)
    await store.bulk.insert([finished("c1", BASE_US)])
    return store


async def test_a_crossing_is_recorded_once_per_level_even_from_a_second_connection(
    data_dir: Path,
) -> None:
    store = await _store(data_dir)
    other = await Store.open(data_dir / DB_FILENAME)
    try:
        assert await store.context.record_crossing("c1", ContextLevel.NOTIFY, 10, 20, BASE_US)
        assert not await other.context.record_crossing("c1", ContextLevel.NOTIFY, 11, 20, BASE_US)
        assert await other.context.record_crossing("c1", ContextLevel.HANDOFF, 14, 20, BASE_US + 1)
        crossed = await store.context.crossings("c1")
        assert [(c.level, c.used_tokens) for c in crossed] == [
            (ContextLevel.NOTIFY, 10),
            (ContextLevel.HANDOFF, 14),
        ]
    finally:
        await other.close()
        await store.close()


async def test_samples_keep_the_recent_trend_and_the_rate_per_turn(data_dir: Path) -> None:
    store = await _store(data_dir)
    try:
        for turn in range(1, TREND_TURNS + 6):
            await store.context.record_sample("c1", turn, 1000 * turn, 200_000, BASE_US + turn)
        trend = await store.context.trend("c1")
        assert len(trend) == TREND_TURNS
        assert trend[-1] == 1000 * (TREND_TURNS + 5)
        assert trend == sorted(trend)
        session = await store.sessions.get("c1")
        assert session.context.tokens_per_turn == 1000
        # A compaction shrinks the context: the rate counts only growth.
        await store.context.record_sample("c1", TREND_TURNS + 6, 500, 200_000, BASE_US + 99)
        session = await store.sessions.get("c1")
        assert 0 < session.context.tokens_per_turn < 1000
    finally:
        await store.close()


async def test_a_document_chain_is_read_oldest_first_and_a_loop_ends(data_dir: Path) -> None:
    store = await _store(data_dir)
    try:
        for i, previous in enumerate([None, "d0", "d1"]):
            await store.documents.register(
                NewDocument(
                    f"d{i}",
                    DocumentKind.HANDOFF,
                    f"/repo/.delegate/handoffs/h{i}.md",
                    BASE_US + i,
                    source_session="c1",
                    previous_id=previous,
                )
            )
        assert [d.document_id for d in await store.documents.chain("d2")] == ["d0", "d1", "d2"]
        await store.documents.add_consumer("d2", "c2")
        await store.documents.set_status("d2", DocumentStatus.CONSUMED)
        newest = (await store.documents.find(DocumentKind.HANDOFF, source_session="c1"))[0]
        assert (newest.document_id, newest.consumers, newest.status) == (
            "d2",
            ("c2",),
            DocumentStatus.CONSUMED,
        )
        # A stored loop (d0 -> d2 -> d1 -> d0) is followed once, never forever.
        async with store.db.transaction() as db:
            await db.execute("UPDATE documents SET previous_id = 'd2' WHERE document_id = 'd0'")
        assert len(await store.documents.chain("d2")) == 3
    finally:
        await store.close()
