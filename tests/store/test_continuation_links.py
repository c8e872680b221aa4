"""Hand-off chains in the store: links old -> new, the whole chain, re-keying."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import BASE_US, finished

from core.config import DB_FILENAME
from core.errors import UnknownConversation
from core.models import DocumentKind
from core.store import NewDocument, Store


async def _store(data_dir: Path, *ids: str) -> Store:
    store = await Store.open(data_dir / DB_FILENAME)
    await store.bulk.insert([finished(cid, BASE_US + i) for i, cid in enumerate(ids)])
    return store


async def test_a_chain_of_four_reads_the_same_from_every_member(data_dir: Path) -> None:
    store = await _store(data_dir, "a", "b", "c", "d", "other")
    try:
        for old, new in (("a", "b"), ("b", "c"), ("c", "d")):
            await store.sessions.link_continuation(old, new)
        for member in "abcd":
            assert await store.sessions.continuation_chain(member) == ["a", "b", "c", "d"]
        assert await store.sessions.continuation_chain("other") == ["other"]
        b = await store.sessions.get("b")
        assert (b.continued_from, b.continued_in) == ("a", "c")
    finally:
        await store.close()


async def test_a_loop_in_stored_links_ends_the_walk(data_dir: Path) -> None:
    store = await _store(data_dir, "a", "b")
    try:
        await store.sessions.link_continuation("a", "b")
        await store.sessions.link_continuation("b", "a")
        assert sorted(await store.sessions.continuation_chain("a")) == ["a", "b"]
    finally:
        await store.close()


async def test_linking_an_unknown_session_is_refused(data_dir: Path) -> None:
    store = await _store(data_dir, "a")
    try:
        with pytest.raises(UnknownConversation):
            await store.sessions.link_continuation("a", "nope")
    finally:
        await store.close()


async def test_links_follow_a_rekeyed_session(data_dir: Path) -> None:
    store = await _store(data_dir, "a", "b", "c")
    try:
        await store.sessions.link_continuation("a", "b")
        await store.sessions.link_continuation("b", "c")
        await store.documents.register(
            NewDocument("d1", DocumentKind.HANDOFF, "/r/h.md", BASE_US, source_session="b")
        )
        await store.documents.add_consumer("d1", "b")
        await store.context.record_sample("b", 1, 10, 100, BASE_US)
        await store.sessions.rekey("b", "b2")
        assert await store.sessions.continuation_chain("a") == ["a", "b2", "c"]
        document = await store.documents.get("d1")
        assert (document.source_session, document.consumers) == ("b2", ("b2",))
    finally:
        await store.close()


async def test_unlinking_undoes_only_that_link(data_dir: Path) -> None:
    store = await _store(data_dir, "a", "b", "c")
    try:
        await store.sessions.link_continuation("a", "b")
        await store.sessions.unlink_continuation("a", "c")  # not linked: nothing
        assert await store.sessions.newest_in_chain("a") == "b"
        await store.sessions.unlink_continuation("a", "b")
        assert await store.sessions.continuation_chain("a") == ["a"]
        assert (await store.sessions.get("b")).continued_from is None
    finally:
        await store.close()
