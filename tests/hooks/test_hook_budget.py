"""A hook answers within its budget whatever it is fed and whatever else runs.

Run as the agents run it (``delegate hook ...`` in a process of its own), against other
real processes holding delegate's locks: the import lock (another import running) and
the store (another writer in an exclusive transaction). On any problem the agent is let
go on (exit 0, nothing on stdout), the reason is in ``hooks.log``, and work left undone
is queued for the supervisor, which does it once the locks are free.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from hook_world import CODEX_SID, SID, World, import_lock_held, store_held

from core.hooks.entry import HOOK_BUDGET_S
from core.orchestrator import AgentOrchestrator

START_SLACK_S = 2.0
"""What a loaded machine may add to the interpreter's start measured on a free store."""


@pytest.fixture
def world(tmp_path):  # type: ignore[no-untyped-def]
    return World(tmp_path)


def baseline(world: World) -> float:
    """How long a hook takes here with nothing in its way (the store created first)."""
    world.turn(input_tokens=20_000)
    done, took = world.hook("Stop", world.stop_payload())
    assert done.returncode == 0
    return took


def allowed(free: float) -> float:
    return free + HOOK_BUDGET_S + START_SLACK_S


def assert_went_on(done, took: float, limit: float) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # nothing to say: the agent goes on
    assert b"Traceback" not in done.stderr
    assert took < limit, f"the hook took {took:.1f} s (allowed {limit:.1f} s)"


def test_the_stop_hook_does_not_wait_for_another_import(world: World) -> None:
    free = baseline(world)
    world.turn(input_tokens=30_000)
    with import_lock_held(world):
        done, took = world.hook("Stop", world.stop_payload())
    assert_went_on(done, took, allowed(free))
    assert "import lock" in world.hook_log()
    assert json.loads(world.queued()) == {"agent": "claude-code", "event": "Stop", "session": SID}


def test_the_stop_hook_does_not_wait_for_a_locked_store(world: World) -> None:
    free = baseline(world)
    with store_held(world):
        done, took = world.hook("Stop", world.stop_payload())
    assert_went_on(done, took, allowed(free))
    assert "budget" in world.hook_log()
    assert SID in world.queued()


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit"])
def test_the_other_claude_hooks_do_not_wait_either(world: World, event: str) -> None:
    free = baseline(world)
    payload = world.start_payload(SID, "resume") | {"prompt": "go on"}
    with import_lock_held(world), store_held(world):
        done, took = world.hook(event, payload)
    assert_went_on(done, took, allowed(free))


def test_codex_notify_does_not_wait_for_another_import(world: World) -> None:
    free = baseline(world)
    note = {"type": "agent-turn-complete", "thread-id": CODEX_SID, "turn-id": "1"}
    with import_lock_held(world):
        done, took = world.hook("notify", "", agent="codex", argument=json.dumps(note))
    assert_went_on(done, took, allowed(free))
    assert CODEX_SID in world.queued()


DEEP = "[" * 60_000 + "]" * 60_000


HOSTILE = {
    "not-json": ("not json", "not JSON"),
    "a-list": ("[1, 2]", "not a JSON object"),
    "deep": (DEEP, "nests 60,000 levels"),
    "deep-inside": ('{"session_id": ' + DEEP + "}", "nests 60,001 levels"),
    "utf-16": (b"\xff\xfe{\x00}\x00", "not UTF-8"),
    "huge": ('{"session_id": "x' + "a" * 2_000_000 + '"}', "larger than"),
    "wrong-types": ('{"session_id": 5, "cwd": []}', "no session_id"),
    "path-id": ('{"session_id": "../../etc/passwd", "cwd": "/"}', "invalid_id"),
    "option-id": ('{"session_id": "--help"}', "invalid_id"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_lets_the_agent_go_on_and_says_why(world: World, name: str) -> None:
    payload, why = HOSTILE[name]
    done, took = world.hook("Stop", payload)
    assert_went_on(done, took, 30.0)
    assert why in world.hook_log()
    assert world.queued() == ""  # nothing to do later: the input named no session


def test_a_deep_codex_argument_is_refused_not_a_recursion_error(world: World) -> None:
    done, took = world.hook("notify", "", agent="codex", argument=DEEP)
    assert_went_on(done, took, 30.0)
    assert b"RecursionError" not in done.stderr
    assert "nests 60,000 levels" in world.hook_log()


def test_an_unknown_event_is_let_through_and_logged(world: World) -> None:
    done, took = world.hook("PreCompact", world.stop_payload())
    assert_went_on(done, took, 30.0)
    assert "'PreCompact' is not one delegate handles" in world.hook_log()


def test_a_broken_data_folder_lets_the_agent_go_on(world: World) -> None:
    world.data.mkdir()
    (world.data / "delegate.sqlite3").write_bytes(b"not a database" * 100)
    done, took = world.hook("Stop", world.stop_payload())
    assert_went_on(done, took, 30.0)
    assert "store_error" in world.hook_log()


async def test_the_supervisor_does_what_a_hook_deferred(world: World) -> None:
    from core.supervisor.hook_queue import HookQueue
    from core.supervisor.supervisor import Supervisor

    baseline(world)
    world.turn(input_tokens=90_000)
    with import_lock_held(world):
        done, _ = await asyncio.to_thread(world.hook, "Stop", world.stop_payload())
    assert done.returncode == 0
    assert SID in world.queued()
    orch = await AgentOrchestrator.open(world.data)
    try:
        supervisor = Supervisor(
            orch,
            claude_dir=world.claude,
            watch_transcripts=False,
            tick_s=0.05,
            monitors=[HookQueue(world.claude)],
        )
        async with supervisor:
            for _ in range(200):
                session = await orch.get_session(SID)
                if session.context.used_tokens == 90_000:
                    break
                await asyncio.sleep(0.05)
        assert session.context.used_tokens == 90_000
        assert world.queued() == ""
    finally:
        await orch.close()
