"""Which sessions a listing or a count covers (``SessionScope``) and in what order.

Through the public orchestrator API on a real store: project roots (a folder
and everything under it, never a sibling sharing its prefix), branch, the
archive, sub-agents under their parents, warm-up sub-agents hidden, and the
created order with its own keyset cursor.
"""

from __future__ import annotations

import dataclasses

import pytest
from support import BASE_US, finished

from core.errors import InvalidCursor
from core.models import SessionScope, SessionSort
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession


def made(
    cid: str,
    last_us: int,
    *,
    cwd: str = "/w/proj",
    branch: str | None = None,
    parent: str | None = None,
    warmup: bool = False,
    created_us: int | None = None,
) -> FinishedSession:
    base = finished(cid, last_us)
    session = dataclasses.replace(
        base.session,
        cwd=cwd,
        git_branch=branch,
        parent_id=parent,
        warmup=warmup,
        created_us=created_us if created_us is not None else base.session.created_us,
    )
    return dataclasses.replace(base, session=session)


async def listed(
    orch: AgentOrchestrator, scope: SessionScope | None = None, limit: int = 3
) -> list[str]:
    """Every id the scope covers, walking all pages ``limit`` at a time."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await orch.list_sessions(limit, cursor, scope=scope)
        ids += [s.conversation_id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            return ids
        assert len(ids) < 10_000


async def test_default_scope_lists_top_level_sessions_not_archived_with_child_counts(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert(
        [
            made("parent", BASE_US + 10),
            made("child-a", BASE_US + 11, parent="parent"),
            made("child-b", BASE_US + 12, parent="parent"),
            made("warm", BASE_US + 13, parent="parent", warmup=True),
            made("other", BASE_US + 5),
            made("orphan", BASE_US + 7, parent="not-in-the-store"),
        ]
    )
    await orch.archive("other")
    assert await listed(orch) == ["parent", "orphan"]
    assert await orch.count_sessions() == 2
    page = await orch.list_sessions(10)
    assert {s.conversation_id: s.child_count for s in page.sessions} == {"parent": 2, "orphan": 0}
    assert (await orch.get_session("parent")).child_count == 2


async def test_sub_agents_as_rows_hidden_or_with_warm_ups(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert(
        [
            made("parent", BASE_US + 10),
            made("child", BASE_US + 11, parent="parent"),
            made("warm", BASE_US + 12, parent="parent", warmup=True),
        ]
    )
    as_rows = SessionScope(top_level=False)
    assert await listed(orch, as_rows) == ["child", "parent"]
    assert await listed(orch, as_rows.model_copy(update={"warmup": True})) == [
        "warm",
        "child",
        "parent",
    ]
    assert await listed(orch, SessionScope(top_level=False, subagents=False)) == ["parent"]
    assert await orch.count_sessions(scope=SessionScope(top_level=False, warmup=True)) == 3


async def test_roots_cover_the_folder_and_below_never_a_sibling_sharing_its_prefix(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert(
        [
            made("root", BASE_US + 1, cwd="/w/proj"),
            made("below", BASE_US + 2, cwd="/w/proj/src/deep"),
            made("sibling", BASE_US + 3, cwd="/w/proj2"),
            made("dash", BASE_US + 4, cwd="/w/proj-old"),
            made("worktree", BASE_US + 5, cwd="/w/wt/feature"),
            made("percent", BASE_US + 6, cwd="/w/100%_done"),
            make_upper := made("upper", BASE_US + 7, cwd="/W/PROJ"),
        ]
    )
    assert make_upper.session.cwd == "/W/PROJ"
    scope = SessionScope(roots=("/w/proj/", "/w/wt/feature"))
    assert await listed(orch, scope) == ["worktree", "below", "root"]
    assert await orch.count_sessions(scope=scope) == 3
    # LIKE wildcards in a folder name are plain characters.
    assert await listed(orch, SessionScope(roots=("/w/100%_done",))) == ["percent"]
    assert await listed(orch, SessionScope(roots=("/w/100",))) == []
    assert await listed(orch, SessionScope(roots=("/",))) == await listed(orch)
    assert await listed(orch, SessionScope(roots=())) == []


async def test_branch_and_archive_scopes(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert(
        [
            made("main-1", BASE_US + 1, branch="main"),
            made("feat-1", BASE_US + 2, branch="feat"),
            made("none", BASE_US + 3),
            made("main-2", BASE_US + 4, branch="main"),
        ]
    )
    assert await listed(orch, SessionScope(branch="main")) == ["main-2", "main-1"]
    archived = await orch.archive("main-2")
    assert archived.archived_at is not None
    assert await listed(orch, SessionScope(branch="main")) == ["main-1"]
    assert await listed(orch, SessionScope(archived=True)) == ["main-2"]
    assert await orch.count_sessions(scope=SessionScope(archived=True)) == 1
    assert (await orch.get_session("main-2")).archived_at == archived.archived_at


async def test_created_order_pages_with_its_own_cursor(orch: AgentOrchestrator) -> None:
    # Activity order is the reverse of the created order here.
    await orch.store.bulk.insert(
        [made(f"c{i:02}", BASE_US + 1_000 - i, created_us=BASE_US + i) for i in range(11)]
    )
    by_created = SessionScope(sort=SessionSort.CREATED)
    assert await listed(orch, by_created) == [f"c{i:02}" for i in reversed(range(11))]
    assert await listed(orch) == [f"c{i:02}" for i in range(11)]
    activity_cursor = (await orch.list_sessions(3)).next_cursor
    created_cursor = (await orch.list_sessions(3, scope=by_created)).next_cursor
    assert activity_cursor
    assert created_cursor
    with pytest.raises(InvalidCursor):
        await orch.list_sessions(3, activity_cursor, scope=by_created)
    with pytest.raises(InvalidCursor):
        await orch.list_sessions(3, created_cursor)


async def test_children_are_listed_oldest_first_one_page_at_a_time(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert(
        [made("parent", BASE_US + 100)]
        + [
            made(f"k{i}", BASE_US + 200 - i, parent="parent", created_us=BASE_US + i)
            for i in range(5)
        ]
        + [made("warm", BASE_US + 300, parent="parent", warmup=True, created_us=BASE_US + 2)]
        + [made("stranger", BASE_US + 300, parent="another")]
    )
    ids: list[str] = []
    cursor = None
    while True:
        page = await orch.list_children("parent", 2, cursor)
        ids += [s.conversation_id for s in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert ids == ["k0", "k1", "k2", "k3", "k4"]
    with_warmup = await orch.list_children("parent", scope=SessionScope(warmup=True))
    assert [s.conversation_id for s in with_warmup.sessions] == [
        "k0",
        "k1",
        "k2",
        "warm",
        "k3",
        "k4",
    ]


async def test_archived_sessions_leave_the_status_counts_and_the_fullest(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([made("a", BASE_US + 1), made("b", BASE_US + 2)])
    before = await orch.status_counts()
    assert before["idle"] == 2
    await orch.archive("a")
    after = await orch.status_counts()
    assert after["idle"] == 1
    assert after["bytes"] < before["bytes"]
    assert [s.conversation_id for s in await orch.fullest_sessions(5)] == ["b"]
    await orch.restore("a")
    assert await orch.status_counts() == before
