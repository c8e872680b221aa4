"""``AgentOrchestrator``: follow-ups, busy guard, detached runs, dismiss and events."""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support import BASE_US, finished, query, row_counts

from core.errors import (
    AgentBusy,
    CwdMissing,
    DismissRefused,
    InvalidRequest,
    SessionNotReady,
    UnknownAgent,
    UnknownConversation,
)
from core.events import (
    BusEvent,
    DelegateFinished,
    DelegateLaunched,
    FollowUpCompleted,
    FollowUpStarted,
    RunOutput,
    SessionDismissed,
)
from core.models import Role, RunKind, RunStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.runners import TextDelta
from core.runs.handle import RunHandle


async def launch(orch: AgentOrchestrator, prompt: str, **kwargs: object) -> RunHandle:
    [handle] = await orch.delegate(prompt=prompt, **kwargs)
    return handle


async def follow_up(orch: AgentOrchestrator, cid: str, prompt: str, **kwargs: object) -> RunHandle:
    [handle] = await orch.delegate(prompt=prompt, conversation_id=cid, **kwargs)
    return handle


async def test_follow_up_reuses_the_conversation_and_history_grows(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    first = await launch(orch, "map the repo")
    assert (await first.wait()).status is RunStatus.COMPLETED
    cid = first.conversation_id
    run_ids = [first.run_id]
    for turn, prompt in enumerate(["list the tests", "now the docs"], start=2):
        handle = await follow_up(orch, cid, prompt)
        assert handle.conversation_id == cid
        assert handle.kind is RunKind.FOLLOW_UP
        run = await handle.wait()
        assert run.status is RunStatus.COMPLETED
        assert run.output == f"[echo] turn {turn}: {prompt}"
        run_ids.append(handle.run_id)
    assert len(set(run_ids)) == 3  # a fresh run id every time

    page = await orch.recent_messages(cid, limit=10)
    assert [(m.role, m.content) for m in page.messages] == [
        (Role.ASSISTANT, "[echo] turn 3: now the docs"),
        (Role.USER, "now the docs"),
        (Role.ASSISTANT, "[echo] turn 2: list the tests"),
        (Role.USER, "list the tests"),
        (Role.ASSISTANT, "[echo] turn 1: map the repo"),
        (Role.USER, "map the repo"),
    ]
    assert [m.run_id for m in page.messages] == [r for r in reversed(run_ids) for _ in (0, 1)]
    runs = await orch.store.runs.for_session(cid)
    assert [r.run_id for r in runs] == run_ids
    assert [r.kind for r in runs] == [RunKind.LAUNCH, RunKind.FOLLOW_UP, RunKind.FOLLOW_UP]
    session = await orch.get_session(cid)
    assert session.state is SessionState.IDLE
    assert session.metrics.turns == 3
    assert session.metrics.messages == 6
    assert session.metrics.tokens == sum(m.token_count for m in page.messages) > 0
    assert row_counts(data_dir)["sessions"] == 1  # no new conversation was created


async def test_follow_up_defaults_to_the_sessions_agent(orch: AgentOrchestrator) -> None:
    first = await launch(orch, "check this", agent_id="reviewer")
    await first.wait()
    handle = await follow_up(orch, first.conversation_id, "again")
    assert handle.agent_id == "reviewer"
    assert (await handle.wait()).output == "[review] turn 2: again"
    other = await follow_up(orch, first.conversation_id, "your turn", agent_id="tester")
    run = await other.wait()
    assert run.agent_id == "tester"
    assert run.output == "[tests] turn 3: your turn"


async def test_follow_up_with_an_unknown_agent_starts_nothing(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US)])
    before = row_counts(data_dir)
    with pytest.raises(UnknownAgent):
        await follow_up(orch, "c1", "hi", agent_id="nobody")
    assert row_counts(data_dir) == before
    assert (await orch.get_session("c1")).state is SessionState.IDLE


async def test_agent_busy_while_a_run_is_active(orch: AgentOrchestrator, data_dir: Path) -> None:
    first = await launch(orch, "slow launch", agent_id="slow")
    cid = first.conversation_id
    assert (await orch.get_session(cid)).state is SessionState.RUNNING
    with pytest.raises(AgentBusy) as busy:
        await follow_up(orch, cid, "too early")
    assert busy.value.code == "agent_busy"
    assert busy.value.message == "delegate still running"
    with pytest.raises(DismissRefused):
        await orch.dismiss(cid)
    await first.wait()

    second = await follow_up(orch, cid, "a slow follow-up")
    await anext(aiter(second.stream()))  # started: its history row is written
    before = row_counts(data_dir)
    with pytest.raises(AgentBusy):
        await follow_up(orch, cid, "still too early")
    assert row_counts(data_dir) == before
    await second.wait()
    third = await follow_up(orch, cid, "now it is free")
    assert (await third.wait()).status is RunStatus.COMPLETED
    assert len(await orch.store.runs.for_session(cid)) == 3


async def test_detached_launch_needs_ready_before_a_follow_up(orch: AgentOrchestrator) -> None:
    handle = await launch(orch, "work in the background", agent_id="slow", mode="detached")
    cid = handle.conversation_id
    assert (await orch.get_session(cid)).state is SessionState.PENDING
    with pytest.raises(SessionNotReady) as not_ready:
        await follow_up(orch, cid, "done yet?")
    assert not_ready.value.code == "session_not_ready"
    with pytest.raises(DismissRefused) as refused:
        await orch.dismiss(cid)
    assert refused.value.code == "dismiss_refused"
    assert (await orch.get_session(cid)).state is SessionState.PENDING

    assert (await handle.wait()).status is RunStatus.COMPLETED
    assert (await orch.get_session(cid)).state is SessionState.READY
    again = await follow_up(orch, cid, "continue")
    assert again.conversation_id == cid
    assert (await again.wait()).output == "[slow] turn 2: continue"
    assert (await orch.get_session(cid)).state is SessionState.READY
    await orch.dismiss(cid)


async def test_failed_run_leaves_the_session_usable(orch: AgentOrchestrator) -> None:
    handle = await launch(orch, "please explode", agent_id="flaky")
    run = await handle.wait()
    assert run.status is RunStatus.FAILED
    assert run.error == "tests exploded"
    session = await orch.get_session(handle.conversation_id)
    assert session.state is SessionState.IDLE
    assert session.last_run_status is RunStatus.FAILED
    [note, prompt] = (await orch.recent_messages(handle.conversation_id)).messages
    assert note.role is Role.SYSTEM
    assert "tests exploded" in note.content
    assert note.run_id == handle.run_id
    assert prompt.content == "please explode"

    retry = await follow_up(orch, handle.conversation_id, "try again calmly")
    again = await retry.wait()
    assert again.status is RunStatus.COMPLETED
    assert again.output == "[flaky] turn 2: try again calmly"
    assert (await orch.get_session(handle.conversation_id)).last_run_status is RunStatus.COMPLETED


async def test_unusable_script_fails_the_run_not_the_session(
    tmp_path: Path, data_dir: Path
) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("rules = 'not a list'", encoding="utf-8")
    config = data_dir / "config.toml"
    config.write_text(
        config.read_text() + f'\n[agents.broken]\nscript = "{broken}"\n', encoding="utf-8"
    )
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished("c1", BASE_US)])
        with pytest.raises(Exception, match=r"broken\.toml") as exc_info:
            await follow_up(orch, "c1", "hi", agent_id="broken")
        assert getattr(exc_info.value, "code", None) == "runner_unavailable"
        assert (await orch.get_session("c1")).state is SessionState.IDLE
    finally:
        await orch.close()


async def test_sessions_never_expire(data_dir: Path) -> None:
    decade_later = datetime.now(UTC) + timedelta(days=3650)
    orch = await AgentOrchestrator.open(data_dir, clock=lambda: decade_later)
    try:
        await orch.store.bulk.insert([finished("ancient", BASE_US - 10**15)])  # 1992
        page = await orch.list_sessions(limit=10)
        assert [s.conversation_id for s in page.sessions] == ["ancient"]
        handle = await follow_up(orch, "ancient", "still there?")
        assert (await handle.wait()).status is RunStatus.COMPLETED
        session = await orch.get_session("ancient")
        assert abs(session.last_interacted_at - decade_later) < timedelta(seconds=1)
    finally:
        await orch.close()


async def test_purge_removes_everything_and_is_remembered(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    await orch.store.bulk.insert([finished("keep", BASE_US, messages=3)])
    handle = await launch(orch, "to be dismissed")
    await handle.wait()
    await (await follow_up(orch, handle.conversation_id, "one more")).wait()
    cid = handle.conversation_id

    session = await orch.dismiss(cid)  # into the archive, kept
    assert session.conversation_id == cid
    assert query(data_dir, "SELECT count(*) FROM runs WHERE conversation_id = ?", [cid]) == [(2,)]
    await orch.purge(cid)
    for table in ("sessions", "messages", "runs"):
        sql = f"SELECT count(*) FROM {table} WHERE conversation_id = ?"
        assert query(data_dir, sql, [cid]) == [(0,)]
    assert query(data_dir, "SELECT conversation_id, source FROM dismissed") == [(cid, "delegate")]
    assert await orch.store.tombstones.is_dismissed(cid)
    # The other session is untouched.
    assert (await orch.get_session("keep")).metrics.messages == 3
    assert len((await orch.recent_messages("keep")).messages) == 3

    with pytest.raises(UnknownConversation):
        await orch.dismiss(cid)
    with pytest.raises(UnknownConversation):
        await orch.recent_messages(cid)
    with pytest.raises(UnknownConversation):
        await follow_up(orch, cid, "are you there?")
    assert [s.conversation_id for s in (await orch.list_sessions(limit=10)).sessions] == ["keep"]


async def test_event_bus_publishes_the_history_in_order(orch: AgentOrchestrator) -> None:
    seen: list[BusEvent] = []
    orch.bus.add_listener(seen.append)
    handle = await launch(orch, "first task")
    await handle.wait()
    cid = handle.conversation_id
    second = await follow_up(orch, cid, "second task")
    await second.wait()
    await orch.dismiss(cid)

    history = [e for e in seen if not isinstance(e, RunOutput)]
    assert [type(e) for e in history] == [
        DelegateLaunched,
        DelegateFinished,
        FollowUpStarted,
        FollowUpCompleted,
        SessionDismissed,
    ]
    launched, finished_, started, completed, dismissed = history
    assert isinstance(launched, DelegateLaunched)
    assert launched.run_id == handle.run_id
    assert launched.prompt == "first task"
    assert isinstance(finished_, DelegateFinished)
    assert finished_.status is RunStatus.COMPLETED
    assert isinstance(started, FollowUpStarted)
    assert started.run_id == second.run_id
    assert started.agent_id == "echo"
    assert isinstance(completed, FollowUpCompleted)
    assert completed.run_id == second.run_id
    assert completed.status is RunStatus.COMPLETED
    assert completed.duration_s >= 0
    assert completed.usage.output_tokens > 0
    assert completed.usage.input_tokens > 0
    assert completed.error is None
    assert all(e.conversation_id == cid for e in history)
    assert isinstance(dismissed, SessionDismissed)

    chunks = [e for e in seen if isinstance(e, RunOutput) and e.run_id == second.run_id]
    streamed = "".join(e.text for e in chunks)
    assert streamed == "[echo] turn 2: second task"
    # The same events are stored, newest first.
    stored = await orch.history()
    assert [e.kind for e in stored] == [e.kind for e in reversed(history)]
    assert stored[1] == completed


async def test_failed_follow_up_is_reported_on_the_bus(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="flaky")])
    seen: list[BusEvent] = []
    orch.bus.add_listener(seen.append)
    await (await follow_up(orch, "c1", "explode now")).wait()
    [completed] = [e for e in seen if isinstance(e, FollowUpCompleted)]
    assert completed.status is RunStatus.FAILED
    assert completed.error == "tests exploded"


async def test_cancel_marks_the_run_cancelled_and_frees_the_session(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="slow")])
    handle = await follow_up(orch, "c1", "a long answer with many many words to stream")
    async for event in handle.stream():
        if isinstance(event, TextDelta):
            break
    assert [h.run_id for h in orch.running()] == [handle.run_id]
    assert await orch.cancel(handle.run_id) is True
    run = await orch.store.runs.get(handle.run_id)
    assert run.status is RunStatus.CANCELLED
    assert run.error
    assert run.finished_at is not None
    session = await orch.get_session("c1")
    assert session.state is SessionState.IDLE
    assert session.last_run_status is RunStatus.CANCELLED
    assert orch.running() == []
    assert await orch.cancel(handle.run_id) is False
    assert await orch.cancel("no-such-run") is False
    again = await follow_up(orch, "c1", "short")
    assert (await again.wait()).status is RunStatus.COMPLETED


async def test_cancel_right_after_the_start_still_closes_the_run(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="slow")])
    handle = await follow_up(orch, "c1", "never mind")
    assert await orch.cancel(handle.run_id) is True

    async def drain() -> list[object]:
        return [e async for e in handle.stream()]

    assert await asyncio.wait_for(drain(), timeout=5) == []
    assert (await asyncio.wait_for(handle.wait(), timeout=5)).status is RunStatus.CANCELLED
    assert (await orch.get_session("c1")).state is SessionState.IDLE
    again = await follow_up(orch, "c1", "go")
    assert (await again.wait()).status is RunStatus.COMPLETED


async def test_close_without_waiting_cancels_runs(data_dir: Path) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="slow")])
    handle = await follow_up(orch, "c1", "a long answer with many many words to stream")
    await orch.close(wait=False)
    [(status, state)] = query(
        data_dir,
        "SELECT r.status, s.state FROM runs r JOIN sessions s USING (conversation_id)"
        " WHERE r.run_id = ?",
        [handle.run_id],
    )
    assert (status, state) == ("cancelled", "idle")


async def test_launch_validates_cwd_and_records_it(orch: AgentOrchestrator, tmp_path: Path) -> None:
    with pytest.raises(CwdMissing, match="missing"):
        await launch(orch, "hi", cwd=str(tmp_path / "missing"))
    (tmp_path / "a-file").touch()
    with pytest.raises(InvalidRequest, match="cwd"):
        await launch(orch, "hi", cwd=str(tmp_path / "a-file"))
    handle = await launch(orch, "hi", cwd=str(tmp_path))
    await handle.wait()
    session = await orch.get_session(handle.conversation_id)
    assert session.cwd == str(tmp_path.resolve())
    assert session.title == "hi"


_ORPHAN_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from core.orchestrator import AgentOrchestrator

    async def main() -> None:
        orch = await AgentOrchestrator.open(Path(sys.argv[1]))
        [handle] = await orch.delegate(prompt="a job that never ends", conversation_id="c1")
        print(handle.run_id, flush=True)
        await asyncio.sleep(120)

    asyncio.run(main())
    """
)


async def test_orphaned_run_of_a_killed_process_is_recovered(data_dir: Path) -> None:
    config = data_dir / "config.toml"
    config.write_text(config.read_text() + "\n[agents.glacial]\ndelay = 30\n", encoding="utf-8")
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="glacial")])
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _ORPHAN_SCRIPT,
            str(data_dir),
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            assert proc.stdout is not None
            orphan_run = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
            assert orphan_run
            # While its owner lives, the run holds the session, across processes.
            with pytest.raises(AgentBusy):
                await follow_up(orch, "c1", "mine now?", agent_id="echo")
        finally:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        assert proc.returncode == -signal.SIGKILL
        # Any reader sees the dead owner: the run is interrupted, the session free.
        assert (await orch.get_session("c1")).state is SessionState.IDLE

        handle = await follow_up(orch, "c1", "take over", agent_id="echo")
        assert (await handle.wait()).status is RunStatus.COMPLETED
        orphan = await orch.store.runs.get(orphan_run)
        assert orphan.status is RunStatus.INTERRUPTED
        assert orphan.error is not None
        assert str(proc.pid) in orphan.error
        assert (await orch.get_session("c1")).state is SessionState.IDLE
    finally:
        await orch.close()
