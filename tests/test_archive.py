"""The archive, names, purging and clearing the demo, through the orchestrator.

Dismissing archives: the session leaves the reusable pool with everything
stored kept, and comes back with ``restore``. Purging frees what we store and
tombstones the id, so an import never brings it back; another tool's files are
never touched.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import BASE_US, finished, query

from core.errors import DismissRefused, InvalidRequest, UnknownConversation
from core.events import HistoryEvent
from core.models import SessionScope, SessionState
from core.orchestrator import AgentOrchestrator


async def launched(orch: AgentOrchestrator, prompt: str = "archive me") -> str:
    (handle,) = await orch.delegate(prompt=prompt)
    return (await handle.wait()).conversation_id


async def kinds(orch: AgentOrchestrator) -> list[str]:
    return [e.kind for e in reversed(await orch.history(20))]


async def test_dismiss_archives_keeping_everything_and_restore_brings_it_back(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    cid = await launched(orch)
    await orch.store.bulk.insert([finished("keep", BASE_US)])
    before = query(data_dir, "SELECT count(*) FROM messages WHERE conversation_id = ?", [cid])

    archived = await orch.dismiss(cid)
    assert archived.archived_at is not None
    assert [s.conversation_id for s in (await orch.list_sessions(10)).sessions] == ["keep"]
    in_archive = await orch.list_sessions(10, scope=SessionScope(archived=True))
    assert [s.conversation_id for s in in_archive.sessions] == [cid]
    # Nothing was freed or tombstoned: the preview still reads it.
    assert (
        query(data_dir, "SELECT count(*) FROM messages WHERE conversation_id = ?", [cid]) == before
    )
    assert len((await orch.recent_messages(cid)).messages) == 2
    assert not await orch.store.tombstones.is_dismissed(cid)
    assert (await kinds(orch))[-1] == "session_dismissed"

    restored = await orch.restore(cid)
    assert restored.archived_at is None
    assert {s.conversation_id for s in (await orch.list_sessions(10)).sessions} == {cid, "keep"}
    assert (await kinds(orch))[-1] == "session_restored"


async def test_a_follow_up_brings_an_archived_session_back_into_the_pool(
    orch: AgentOrchestrator,
) -> None:
    cid = await launched(orch)
    await orch.dismiss(cid)
    (handle,) = await orch.delegate(prompt="one more thing", conversation_id=cid)
    await handle.wait()
    session = await orch.get_session(cid)
    assert session.archived_at is None
    assert cid in [s.conversation_id for s in (await orch.list_sessions(10)).sessions]
    seen = await kinds(orch)
    assert seen.index("session_restored") > seen.index("session_dismissed")


async def test_archiving_a_running_session_is_refused(orch: AgentOrchestrator) -> None:
    (handle,) = await orch.delegate(prompt="slow work", agent_id="slow")
    with pytest.raises(DismissRefused):
        await orch.archive(handle.conversation_id)
    await handle.wait()
    assert (await orch.get_session(handle.conversation_id)).archived_at is None


async def test_rename_names_the_session_everywhere_and_none_clears_it(
    orch: AgentOrchestrator,
) -> None:
    cid = await launched(orch, "a long first prompt")
    renamed = await orch.rename(cid, "  Release checklist  ")
    assert renamed.name == "Release checklist"
    assert renamed.shown_title == "Release checklist"
    assert (await orch.get_session(cid)).name == "Release checklist"
    found = await orch.list_sessions(10, query="checklist")
    assert [s.conversation_id for s in found.sessions] == [cid]
    assert (await kinds(orch))[-1] == "session_renamed"
    history: list[HistoryEvent] = await orch.history(1)
    assert getattr(history[0], "name", None) == "Release checklist"

    cleared = await orch.rename(cid, None)
    assert cleared.name is None
    assert cleared.shown_title == "a long first prompt"


@pytest.mark.parametrize("bad", ["two\nlines", "x" * 201, "tab\tand\x1b[31m escape"])
async def test_a_name_is_one_line_of_at_most_200_characters(
    orch: AgentOrchestrator, bad: str
) -> None:
    cid = await launched(orch)
    with pytest.raises(InvalidRequest):
        await orch.rename(cid, bad)
    assert (await orch.get_session(cid)).name is None
    assert (await orch.rename(cid, "y" * 200)).name == "y" * 200


async def test_purge_frees_an_archived_session_and_remembers_it(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    cid = await launched(orch)
    with pytest.raises(DismissRefused) as not_archived:
        await orch.purge(cid)
    assert "archive" in not_archived.value.message
    await orch.archive(cid)
    await orch.purge(cid)
    for table in ("sessions", "messages", "runs"):
        sql = f"SELECT count(*) FROM {table} WHERE conversation_id = ?"
        assert query(data_dir, sql, [cid]) == [(0,)]
    assert await orch.store.tombstones.is_dismissed(cid)
    with pytest.raises(UnknownConversation):
        await orch.restore(cid)
    # force: straight from the reusable pool.
    other = await launched(orch, "another")
    await orch.purge(other, force=True)
    assert query(data_dir, "SELECT count(*) FROM sessions WHERE conversation_id = ?", [other]) == [
        (0,)
    ]


async def test_purge_never_stops_a_run(orch: AgentOrchestrator) -> None:
    (handle,) = await orch.delegate(prompt="slow work", agent_id="slow")
    with pytest.raises(DismissRefused):
        await orch.purge(handle.conversation_id, force=True)
    await handle.wait()
    assert await orch.get_session(handle.conversation_id)


async def test_clear_demo_removes_only_the_demo_sessions(
    orch: AgentOrchestrator,
) -> None:
    from core import demo
    from core.clock import to_us
    from core.tokens import count_tokens

    mine = await launched(orch, "real work")
    assert await demo.fill(orch.store, 30, to_us(orch.clock()), count_tokens) == 30
    await orch.archive(demo.demo_id(3))
    assert await orch.clear_demo() == 30
    every = SessionScope(top_level=False, warmup=True)
    assert [s.conversation_id for s in (await orch.list_sessions(50, scope=every)).sessions] == [
        mine
    ]
    assert await orch.clear_demo() == 0
    assert (await orch.get_session(mine)).state is SessionState.IDLE
