"""``UserPromptSubmit``: past the force level a prompt is refused, naming where to go on.

Run as Claude Code runs it (``delegate hook claude-code UserPromptSubmit``, the JSON
on stdin), over a real transcript and a real data folder.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_hook_handler import SID, World, answer

PROMPT = {"session_id": SID, "hook_event_name": "UserPromptSubmit", "prompt": "one more thing"}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def submit(world: World) -> object:
    return answer(world.hook("UserPromptSubmit", PROMPT | {"cwd": str(world.repo)}))


async def test_below_the_force_level_a_prompt_goes_through(world: World) -> None:
    world.turn(input_tokens=150_000)  # 75%: a hand-off is asked at the turn's end, no refusal
    assert await asyncio.to_thread(submit, world) is None


async def test_an_unknown_session_is_never_refused(world: World) -> None:
    assert await asyncio.to_thread(submit, world) is None  # no transcript yet: a first prompt


async def test_past_the_force_level_without_a_handoff_it_says_how_to_write_one(
    world: World,
) -> None:
    world.turn(input_tokens=184_000)  # 92%
    refused = await asyncio.to_thread(submit, world)
    assert isinstance(refused, dict)
    assert refused["decision"] == "block"
    assert "92%" in refused["reason"]
    assert "past the 90%" in refused["reason"]
    assert f"delegate handoff write {SID}" in refused["reason"]


async def test_past_the_force_level_it_names_the_handoff_then_the_successor(
    world: World,
) -> None:
    world.turn(input_tokens=184_000)
    answer(await asyncio.to_thread(world.stop))  # the hand-off is asked for ...
    answer(await asyncio.to_thread(world.stop, active=True, reply="no"))  # ... built from facts
    refused = await asyncio.to_thread(submit, world)
    assert isinstance(refused, dict)
    assert "/.delegate/handoffs/handoff-" in refused["reason"]
    assert "Continue from its hand-off" in refused["reason"]
    # Once continued, it names the successor instead: tests/e2e/test_continue_real.py.
