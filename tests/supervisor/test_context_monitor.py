"""The context monitor: each level announced once per session, the hand-off asked for at
the hand-off level and retried after a later turn while none exists (seed 003 §1, §8)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from context_support import WINDOW, RecordingHandOff, hot_data_dir
from supervisor_support import (
    CLAUDE_PROJECT,
    CLAUDE_SESSION,
    REALDATA,
    assistant_line,
    copy_tree,
    recording,
)
from test_store_watching import delegate_cli

from core.events import ContextThresholdCrossed
from core.models import ContextLevel
from core.orchestrator import AgentOrchestrator
from core.supervisor import (
    CapsuleDrift,
    ContextMonitor,
    ReturnsRetention,
    StaleRuns,
    Supervisor,
)
from core.supervisor.context_monitor import evaluate_context
from core.supervisor.hook_queue import HookQueue


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions launched without a folder work in the test's own (hand-offs land there)."""
    monkeypatch.chdir(tmp_path)


FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}


async def _turn(orch: AgentOrchestrator, prompt: str, session: str | None = None) -> str:
    [handle] = await orch.delegate(prompt=prompt, agent_id="hot", conversation_id=session)
    await handle.wait()
    return handle.conversation_id


def _crossed(events: list[object], cid: str) -> list[ContextLevel]:
    return [
        e.level
        for e in events
        if isinstance(e, ContextThresholdCrossed) and e.conversation_id == cid
    ]


async def _stored_crossings(orch: AgentOrchestrator, cid: str) -> list[ContextLevel]:
    return [
        e.level
        for e in await orch.history(500)
        if isinstance(e, ContextThresholdCrossed) and e.conversation_id == cid
    ]


async def test_each_level_is_announced_once_and_the_hand_off_is_asked_for_once(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    handoff = RecordingHandOff(orch)
    monitor = ContextMonitor(handoff)
    supervisor = Supervisor(orch, monitors=[monitor], **FAST)  # driven by hand: not started
    try:
        with recording(orch.bus) as seen:
            cid = await _turn(orch, "start")
            await monitor.on_sessions_changed(supervisor, (cid,))
            assert _crossed(seen.events, cid) == []

            await _turn(orch, "half way there", cid)
            await monitor.on_sessions_changed(supervisor, (cid,))
            assert _crossed(seen.events, cid) == [ContextLevel.NOTIFY]
            assert handoff.calls == []

            await _turn(orch, "seventy-five now", cid)
            await monitor.on_sessions_changed(supervisor, (cid,))
            await monitor.drain()
            assert _crossed(seen.events, cid) == [
                ContextLevel.NOTIFY,
                ContextLevel.REMINDER,
                ContextLevel.HANDOFF,
            ]
            assert handoff.calls == [cid]

            # Later turns and changes: nothing is announced twice, the document exists.
            await _turn(orch, "carry on", cid)
            await monitor.on_sessions_changed(supervisor, (cid,))
            await monitor.on_sessions_changed(supervisor, (cid,))
            await monitor.drain()
            assert len(_crossed(seen.events, cid)) == 3
            assert handoff.calls == [cid]

        [event] = [
            e
            for e in seen.events
            if isinstance(e, ContextThresholdCrossed) and e.level is ContextLevel.HANDOFF
        ]
        assert (event.used_tokens, event.limit_tokens, event.percent, event.agent_id) == (
            150_000,
            WINDOW,
            75.0,
            "hot",
        )
        # History cells: stored, so a panel opened later shows them.
        assert await _stored_crossings(orch, cid) == [
            ContextLevel.HANDOFF,
            ContextLevel.REMINDER,
            ContextLevel.NOTIFY,
        ]
    finally:
        await orch.close()


async def test_crossings_survive_a_restart_and_are_never_announced_again(
    tmp_path: Path,
) -> None:
    data = hot_data_dir(tmp_path)
    orch = await AgentOrchestrator.open(data)
    try:
        cid = await _turn(orch, "ninety-five at once")
        await evaluate_context(orch, [cid], continuation=None)
        # A jump past every level records each of them, lowest first.
        assert [c.level for c in await orch.store.context.crossings(cid)] == [
            ContextLevel.NOTIFY,
            ContextLevel.REMINDER,
            ContextLevel.HANDOFF,
            ContextLevel.FORCE,
        ]
    finally:
        await orch.close()
    again = await AgentOrchestrator.open(data)
    try:
        monitor = ContextMonitor(RecordingHandOff(again))
        with recording(again.bus) as seen:
            await monitor.on_sessions_changed(Supervisor(again, **FAST), (cid,))
            await evaluate_context(again, [cid], continuation=None)
            await monitor.drain()
        assert _crossed(seen.events, cid) == []
        assert len(await _stored_crossings(again, cid)) == 4
    finally:
        await again.close()


async def test_a_failed_hand_off_is_retried_after_the_next_turn_not_on_every_change(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    failing = RecordingHandOff(orch, registers=False)  # writes no document
    monitor = ContextMonitor(failing)
    supervisor = Supervisor(orch, monitors=[monitor], **FAST)
    try:
        cid = await _turn(orch, "seventy-five straight away")
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert failing.calls == [cid]
        # A change that is not a turn (a rename) does not try again.
        await orch.rename(cid, "renamed")
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert failing.calls == [cid]
        # The next turn does.
        await _turn(orch, "carry on", cid)
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert failing.calls == [cid, cid]
        # Once a document exists, no more.
        failing.registers = True
        await _turn(orch, "carry on", cid)
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        await _turn(orch, "carry on", cid)
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert failing.calls == [cid, cid, cid]
    finally:
        await orch.close()


async def test_a_project_can_turn_thresholds_off_or_lower_them(tmp_path: Path) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    quiet, eager = tmp_path / "quiet", tmp_path / "eager"
    for folder, table in (
        (quiet, "enabled = false"),
        (eager, "notify_user_at = 10\nreminder = 20\nhandoff = 40\nforce = 60"),
    ):
        (folder / ".git").mkdir(parents=True)  # a repository's top, as far as delegate looks
        (folder / ".delegate").mkdir()
        (folder / ".delegate" / "config.toml").write_text(f"[context]\n{table}\n")
    handoff = RecordingHandOff(orch)
    try:
        with recording(orch.bus) as seen:
            [off] = await orch.delegate(prompt="half", agent_id="hot", cwd=str(quiet))
            [low] = await orch.delegate(prompt="half", agent_id="hot", cwd=str(eager))
            await off.wait()
            await low.wait()
            ids = [off.conversation_id, low.conversation_id]
            await evaluate_context(orch, ids, continuation=handoff)
        assert _crossed(seen.events, off.conversation_id) == []
        assert _crossed(seen.events, low.conversation_id) == [
            ContextLevel.NOTIFY,
            ContextLevel.REMINDER,
            ContextLevel.HANDOFF,
        ]
        assert handoff.calls == [low.conversation_id]
    finally:
        await orch.close()


async def test_the_supervisor_runs_the_monitor_by_default_and_announces_another_process_s_turn(
    tmp_path: Path,
) -> None:
    data = hot_data_dir(tmp_path)
    orch = await AgentOrchestrator.open(data)
    try:
        supervisor = Supervisor(orch, **FAST)
        assert [type(m) for m in supervisor.monitors] == [
            StaleRuns,
            ContextMonitor,
            CapsuleDrift,
            ReturnsRetention,
            HookQueue,
        ]
        with recording(orch.bus) as seen:
            async with supervisor:
                # Another process drives the turn: its change reaches this supervisor
                # through the store.
                other = await delegate_cli(data, "run", "--agent", "hot", "half from elsewhere")
                assert other.returncode == 0, other.stderr
                event = await seen.wait_for(lambda e: isinstance(e, ContextThresholdCrossed))
        assert isinstance(event, ContextThresholdCrossed)
        assert event.level is ContextLevel.NOTIFY
        [(stored)] = await _stored_crossings(orch, event.conversation_id)
        assert stored is ContextLevel.NOTIFY  # once, whichever process saw it first
    finally:
        await orch.close()


async def test_an_interactive_transcript_growing_past_a_level_is_acted_on(
    tmp_path: Path,
) -> None:
    claude = copy_tree(REALDATA / "claude", tmp_path / "claude")
    transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    handoff = RecordingHandOff(orch)
    try:
        with recording(orch.bus) as seen:
            async with Supervisor(
                orch,
                claude_dir=claude,
                codex_dir=tmp_path / "no-codex",
                store_poll_s=0.05,
                tick_s=0.1,
                debounce_ms=50,
                monitors=[ContextMonitor(handoff)],
            ):
                # Imported at start: an old transcript is not a turn happening now.
                await seen.wait_for(
                    lambda e: (
                        getattr(e, "kind", "") == "sessions_changed"
                        and CLAUDE_SESSION in getattr(e, "conversation_ids", ())
                    )
                )
                assert _crossed(seen.events, CLAUDE_SESSION) == []
                line = json.loads(assistant_line(CLAUDE_SESSION, 170_000, 1))
                line["timestamp"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
                with transcript.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(line) + "\n")
                await seen.wait_for(
                    lambda e: (
                        isinstance(e, ContextThresholdCrossed) and e.level is ContextLevel.HANDOFF
                    )
                )
                await handoff.wait_calls(1)
        assert handoff.calls == [CLAUDE_SESSION]
        assert _crossed(seen.events, CLAUDE_SESSION)[:3] == [
            ContextLevel.NOTIFY,
            ContextLevel.REMINDER,
            ContextLevel.HANDOFF,
        ]
    finally:
        await orch.close()
