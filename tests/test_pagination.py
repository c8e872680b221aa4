"""Keyset pagination of sessions and messages, with property tests for the invariants."""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import BASE_US, finished

from core import cursors
from core.config import Settings
from core.errors import InvalidCursor
from core.orchestrator import AgentOrchestrator
from core.store import Store

PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SQL_INT = st.integers(min_value=-(2**63), max_value=2**63 - 1)


async def all_pages(orch: AgentOrchestrator, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        page = await orch.list_sessions(limit=limit, cursor=cursor)
        pages.append([s.conversation_id for s in page.sessions])
        cursor = page.next_cursor
        if cursor is None:
            return pages
        assert len(pages) < 1_000, "pagination does not terminate"


@pytest.mark.parametrize(("count", "limit"), [(23, 5), (20, 5), (5, 5), (1, 3), (0, 3)])
async def test_list_pages_without_duplicates_or_gaps(
    orch: AgentOrchestrator, count: int, limit: int
) -> None:
    await orch.store.bulk.insert([finished(f"c{i:02}", BASE_US + i * 1000) for i in range(count)])
    pages = await all_pages(orch, limit)
    sizes = [limit] * (count // limit) + ([count % limit] if count % limit else [])
    assert [len(p) for p in pages] == (sizes or [0])
    flat = [cid for page in pages for cid in page]
    assert flat == [f"c{i:02}" for i in reversed(range(count))]


async def test_ties_in_last_interacted_at_are_broken_by_id(orch: AgentOrchestrator) -> None:
    ids = [f"s{i}" for i in range(12)]
    await orch.store.bulk.insert(
        [finished(cid, BASE_US + (5 if i % 3 else 0)) for i, cid in enumerate(ids)]
    )
    flat = [cid for page in await all_pages(orch, 2) for cid in page]
    expected = sorted(ids, key=lambda c: (BASE_US + (5 if ids.index(c) % 3 else 0), c))
    assert flat == list(reversed(expected))


async def test_paging_while_sessions_are_touched(orch: AgentOrchestrator) -> None:
    ids = [f"c{i:02}" for i in range(30)]
    await orch.store.bulk.insert([finished(cid, BASE_US + i * 1000) for i, cid in enumerate(ids)])
    seen: list[str] = []
    touched: set[str] = set()
    cursor = None
    for step in range(100):
        page = await orch.list_sessions(limit=4, cursor=cursor)
        seen += [s.conversation_id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            break
        # Between pages: follow up on one session already listed, one not listed
        # yet, and launch a new one. All of them jump to the top of the list.
        unseen = [c for c in reversed(ids) if c not in seen and c not in touched]
        for cid in (seen[step % len(seen)], unseen[-1] if unseen else None):
            if cid is not None:
                touched.add(cid)
                await (await orch.delegate(prompt=f"touch {step}", conversation_id=cid))[0].wait()
        await (await orch.delegate(prompt=f"new {step}"))[0].wait()

    counts = Counter(seen)
    assert max(counts.values()) == 1, "a session appeared twice"
    untouched = [cid for cid in ids if cid not in touched]
    assert untouched
    assert all(counts[cid] == 1 for cid in untouched), "an untouched session was skipped"
    assert [c for c in seen if c in untouched] == [c for c in reversed(ids) if c in untouched]


async def test_message_cursors_page_back_without_gaps(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, messages=25), finished("c2", BASE_US)])
    seqs: list[int] = []
    contents: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await orch.recent_messages("c1", limit=4, cursor=cursor)
        pages += 1
        seqs += [m.seq for m in page.messages]
        contents += [m.content for m in page.messages]
        if pages == 2:
            # New messages arrive while paging back: older pages are unaffected.
            await (await orch.delegate(prompt="meanwhile", conversation_id="c1"))[0].wait()
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seqs == list(reversed(range(25)))
    assert contents == [f"message {i} of c1" for i in reversed(range(25))]
    assert pages == 7
    latest = await orch.recent_messages("c1", limit=2)
    assert [m.content for m in latest.messages] == ["[echo] turn 14: meanwhile", "meanwhile"]


async def test_message_page_of_exact_size_has_no_next_cursor(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, messages=6)])
    first = await orch.recent_messages("c1", limit=3)
    second = await orch.recent_messages("c1", limit=3, cursor=first.next_cursor)
    assert [m.seq for m in second.messages] == [2, 1, 0]
    assert second.next_cursor is None


# --- property tests ---------------------------------------------------------------


@PROPERTY
@given(ts=SQL_INT, cid=st.text())
def test_session_cursor_round_trips(ts: int, cid: str) -> None:
    cursor = cursors.SessionCursor(ts, cid)
    encoded = cursors.encode_session_cursor(cursor)
    assert encoded.isascii()
    assert cursors.decode_session_cursor(encoded) == cursor


@PROPERTY
@given(seq=SQL_INT, cid=st.text())
def test_message_cursor_round_trips(seq: int, cid: str) -> None:
    cursor = cursors.MessageCursor(cid, seq)
    encoded = cursors.encode_message_cursor(cursor)
    assert cursors.decode_message_cursor(encoded, cid) == cursor
    with pytest.raises(InvalidCursor):
        cursors.decode_message_cursor(encoded, cid + "x")
    with pytest.raises(InvalidCursor):
        cursors.decode_session_cursor(encoded)


@PROPERTY
@given(garbage=st.text())
def test_garbage_text_is_an_invalid_cursor(garbage: str) -> None:
    with pytest.raises(InvalidCursor):
        cursors.decode_session_cursor(garbage)
    with pytest.raises(InvalidCursor):
        cursors.decode_message_cursor(garbage, "c1")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
CURSORISH = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from([1, 2, "1", None]),
        "k": st.sampled_from(["s", "m", "x"]),
        "t": JSON | SQL_INT | st.integers(),
        "id": JSON,
        "c": st.sampled_from(["c1", "c2"]) | JSON,
        "s": JSON | st.integers(),
    },
)


@PROPERTY
@given(payload=JSON | CURSORISH, raw=st.binary())
def test_forged_payloads_decode_or_raise_invalid_cursor(payload: object, raw: bytes) -> None:
    for blob in (json.dumps(payload).encode(), raw):
        forged = base64.urlsafe_b64encode(blob).decode().rstrip("=")
        try:
            session = cursors.decode_session_cursor(forged)
        except InvalidCursor:
            pass
        else:
            assert -(2**63) <= session.last_interacted_us < 2**63
            assert isinstance(session.conversation_id, str)
        try:
            message = cursors.decode_message_cursor(forged, "c1")
        except InvalidCursor:
            pass
        else:
            assert message.conversation_id == "c1"
            assert -(2**63) <= message.seq < 2**63


async def _paged(sessions: list[tuple[str, int]], limit: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "store.sqlite3")
        orch = AgentOrchestrator(store, Settings())
        try:
            await store.bulk.insert([finished(cid, ts, messages=0) for cid, ts in sessions])
            return [cid for page in await all_pages(orch, limit) for cid in page]
        finally:
            await store.close()


@PROPERTY
@given(
    sessions=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=12),
            st.integers(0, 3) | st.integers(-(10**15), 10**16),
        ),
        max_size=40,
        unique_by=lambda s: s[0],
    ),
    limit=st.integers(1, 6) | st.integers(1, 100),
)
def test_pages_concatenate_to_the_full_ordering(
    sessions: list[tuple[str, int]], limit: int
) -> None:
    flat = asyncio.run(_paged(sessions, limit))
    expected = [cid for cid, _ in sorted(sessions, key=lambda s: (s[1], s[0]), reverse=True)]
    assert flat == expected
