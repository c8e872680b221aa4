"""A continuation that starts past the hand-off level is not handed off again until it
has done a turn of its own: no chain grows by itself with no work in between."""

from __future__ import annotations

from pathlib import Path

from handoff_support import make_repo
from support import write_config

from core.orchestrator import AgentOrchestrator
from core.supervisor.context_monitor import default_continuation, evaluate_context

# Every turn of this agent reports its context three quarters full.
FULL_SCRIPT = """
[[rules]]
match = "."
reply = "turn {turn}: still full"
context_tokens = 150000
"""


def _data_dir(root: Path) -> Path:
    data = write_config(root / "data")
    script = data / "full.toml"
    script.write_text(FULL_SCRIPT, encoding="utf-8")
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.full]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 200000\n'
        )
    return data


async def _turn(orch: AgentOrchestrator, prompt: str, **where: str) -> str:
    [handle] = await orch.delegate(prompt=prompt, agent_id="full", **where)
    await handle.wait()
    return handle.conversation_id


async def test_a_continuation_full_from_its_first_turn_waits_for_a_turn_of_its_own(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    orch = await AgentOrchestrator.open(_data_dir(tmp_path))
    try:
        continuation = default_continuation(orch)
        first = await _turn(orch, "implement the login flow", cwd=str(repo))
        await evaluate_context(orch, [first], continuation=continuation)
        second = (await orch.get_session(first)).continued_in
        assert second is not None
        assert (await orch.get_session(second)).context.percent >= 70
        # Listed as the work it carries on, not as the text that primed it.
        assert (await orch.get_session(second)).title == "implement the login flow"

        # Its priming turn alone: judged (the crossings are recorded) but not handed off.
        await evaluate_context(orch, [second], continuation=continuation)
        assert (await orch.get_session(second)).continued_in is None

        # A turn of its own past the level: now it hands off, once.
        await _turn(orch, "and the logout", conversation_id=second)
        await evaluate_context(orch, [second], continuation=continuation)
        third = (await orch.get_session(second)).continued_in
        assert third is not None
        assert (await orch.get_session(third)).continued_in is None
    finally:
        await orch.close()
