"""A sub-agent run by a real CLI gets its parent's shared part through the CLI's own
option: Claude Code's appended system prompt, Codex's developer instructions."""

from __future__ import annotations

import asyncio
import json

from support import BASE_US, finished, json_out
from test_agent_argv import World, world  # noqa: F401 - the fixture

from core.config import DB_FILENAME
from core.models import MessageCategory, Role
from core.store import NewMessage, Store

INSTRUCTIONS = "--Always answer in French."  # starts like an option: still only text


def _parent(world: World) -> str:  # noqa: F811
    async def seed() -> None:
        world.data.mkdir(parents=True, exist_ok=True)
        store = await Store.open(world.data / DB_FILENAME)
        try:
            await store.bulk.insert([finished("parent-1", BASE_US)])
            await store.messages.append(
                "parent-1",
                [
                    NewMessage("s", Role.SYSTEM, INSTRUCTIONS, BASE_US, 5),
                    NewMessage(
                        "c",
                        Role.USER,
                        "the repo is a CLI",
                        BASE_US,
                        5,
                        category=MessageCategory.CONTEXT,
                    ),
                ],
            )
        finally:
            await store.close()

    asyncio.run(seed())
    return "parent-1"


def test_claude_code_child_gets_the_share_as_an_appended_system_prompt(
    world: World,  # noqa: F811
) -> None:
    parent = _parent(world)
    result = world.delegate("run", "--json", "--agent", "claude-code", "--parent", parent, "go")
    assert result.returncode == 0, result.stderr
    [argv] = world.argvs("claude")
    separator = argv.index("--")
    [option] = [a for a in argv[:separator] if a.startswith("--append-system-prompt=")]
    assert option == f"--append-system-prompt={INSTRUCTIONS}\n\nthe repo is a CLI"
    assert argv[separator:] == ["--", "go"]
    child = json_out(result)["conversation_id"]
    # Its follow-ups resume the session, which keeps the prompt: not sent again.
    again = world.delegate("run", "--session", child, "more")
    assert again.returncode == 0, again.stderr
    assert not any(a.startswith("--append-system-prompt") for a in world.argvs("claude")[1])


def test_codex_child_gets_the_share_as_developer_instructions(world: World) -> None:  # noqa: F811
    parent = _parent(world)
    result = world.delegate("run", "--agent", "codex", "--parent", parent, "go")
    assert result.returncode == 0, result.stderr
    [argv] = world.argvs("codex")
    separator = argv.index("--")
    at = argv.index("-c")
    assert at < separator
    key, value = argv[at + 1].split("=", 1)
    assert key == "developer_instructions"
    assert json.loads(value) == f"{INSTRUCTIONS}\n\nthe repo is a CLI"
    assert argv[separator:] == ["--", "go"]


def test_a_detached_child_hands_the_share_to_its_worker() -> None:
    from core.config import Settings
    from core.detached import GoMessage

    go = GoMessage("run-1", Settings(), "/tmp", 1, 0, INSTRUCTIONS)
    assert GoMessage.decode(go.encode()).system_prompt == INSTRUCTIONS
    older = GoMessage("run-1", Settings(), "/tmp", 1, 0)  # a caller without a share
    assert GoMessage.decode(older.encode()).system_prompt == ""
