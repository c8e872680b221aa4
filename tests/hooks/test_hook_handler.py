"""``delegate hook claude-code EVENT``, run as Claude Code runs it: a process of its own,
the event's JSON on stdin, over a real transcript and a real store.

The whole loop with the real CLI is in tests/e2e/test_hooks_real.py; these are
the paths a well-behaved model server does not take.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hostile_trees import claude_lines, jsonl
from support import run_cli

from core.models import DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator

SID = "5b0c3f6e-1d7a-4e8e-9a51-2f3c4d5e6f70"


class World:
    """A project (a git repository), Claude Code's folder with one transcript, a data folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path
        self.repo = tmp_path / "project"
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        self.claude = tmp_path / "claude"
        self.data = tmp_path / "data"
        self.transcript = self.claude / "projects" / "-project" / f"{SID}.jsonl"
        self.transcript.parent.mkdir(parents=True)

    def turn(self, input_tokens: int) -> None:
        """The session's transcript after a turn whose model call carried ``input_tokens``."""
        lines = claude_lines(SID, "work on the pong module", input_tokens=input_tokens)
        for line in lines:
            line["cwd"] = str(self.repo)
        self.transcript.write_bytes(jsonl(lines))

    def hook(self, event: str, payload: dict[str, Any] | str) -> subprocess.CompletedProcess[str]:
        stdin = payload if isinstance(payload, str) else json.dumps(payload)
        return run_cli(
            "--data-dir",
            str(self.data),
            "hook",
            "claude-code",
            event,
            home=self.home,
            stdin=stdin,
            # What the hooks do, not how fast (test_hook_budget.py holds the budget): a
            # loaded machine must not cut a hand-off short here.
            env={"CLAUDE_CONFIG_DIR": str(self.claude), "DELEGATE_HOOK_BUDGET_S": "30"},
        )

    def stop(
        self, *, active: bool = False, reply: str = "done"
    ) -> subprocess.CompletedProcess[str]:
        return self.hook(
            "Stop",
            {
                "session_id": SID,
                "transcript_path": str(self.transcript),
                "cwd": str(self.repo),
                "hook_event_name": "Stop",
                "stop_hook_active": active,
                "last_assistant_message": reply,
            },
        )


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def answer(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


async def stored(world: World) -> tuple[Any, list[Any], list[str]]:
    orch = await AgentOrchestrator.open(world.data)
    try:
        session = await orch.get_session(SID)
        docs = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=SID)
        history = [e.kind for e in (await orch.store.history.events(limit=50)).events]
        return session, docs, history
    finally:
        await orch.close()


async def test_below_the_handoff_level_a_turn_is_imported_and_nothing_asked(
    world: World,
) -> None:
    world.turn(input_tokens=20_000)
    assert answer(await asyncio.to_thread(world.stop)) is None
    session, docs, _ = await stored(world)
    # The turn's figure, imported: what its model call read (input and cache), not its reply.
    assert session.context.used_tokens == 20_000
    assert docs == []


async def test_the_warning_levels_are_said_to_the_person_once(world: World) -> None:
    world.turn(input_tokens=110_000)  # 55% of the model's 200,000
    said = answer(await asyncio.to_thread(world.stop))
    assert "decision" not in said  # a warning never stops the turn
    message = said["systemMessage"]
    assert "55%" in message
    assert "70%" in message  # when the hand-off comes
    assert answer(await asyncio.to_thread(world.stop)) is None  # once per level
    world.turn(input_tokens=124_000)  # 62%: the reminder
    assert "62%" in answer(await asyncio.to_thread(world.stop))["systemMessage"]


async def test_an_unusable_reply_is_reported_and_a_handoff_is_built_from_facts(
    world: World,
) -> None:
    world.turn(input_tokens=150_000)
    asked = answer(await asyncio.to_thread(world.stop))
    assert asked["decision"] == "block"
    assert "# Context Handoff" in asked["reason"]
    assert SID in asked["reason"]

    said = answer(await asyncio.to_thread(world.stop, active=True, reply="Sorry, I can't."))
    assert "not usable" in said["systemMessage"]
    assert "built from facts" in said["systemMessage"]
    _, [doc], history = await stored(world)
    assert doc.producer == "facts"  # the fallback: never nothing
    assert doc.status is DocumentStatus.PENDING
    assert "handoff_failed" in history
    assert "handoff_written" in history

    # A hand-off exists now: the next turn is not stopped again.
    assert answer(await asyncio.to_thread(world.stop)) is None


async def test_a_stop_continued_by_someone_else_is_left_alone(world: World) -> None:
    """Another hook kept the turn going (``stop_hook_active``) and delegate asked
    nothing: its reply is not taken for a hand-off, and no request piles on."""
    world.turn(input_tokens=150_000)
    assert answer(await asyncio.to_thread(world.stop, active=True)) is None
    _, docs, _ = await stored(world)
    assert docs == []


async def test_a_resumed_session_is_reminded_of_its_own_handoff_and_leaves_it_waiting(
    world: World,
) -> None:
    world.turn(input_tokens=150_000)
    answer(await asyncio.to_thread(world.stop))
    answer(await asyncio.to_thread(world.stop, active=True, reply="no"))  # pending, from facts
    start = {"session_id": SID, "cwd": str(world.repo), "hook_event_name": "SessionStart"}
    for source in ("resume", "compact"):
        again = answer(
            await asyncio.to_thread(world.hook, "SessionStart", start | {"source": source})
        )
        told = again["hookSpecificOutput"]["additionalContext"]
        assert told.startswith("delegate: This session has handed off")
        assert "# Context Handoff" in told
    _, [doc], _ = await stored(world)
    assert doc.status is DocumentStatus.PENDING  # still waiting for the session that continues it
    new = start | {"session_id": "7d1e2f3a-4b5c-4d6e-8f70-112233445566", "source": "startup"}
    given = answer(await asyncio.to_thread(world.hook, "SessionStart", new))
    context = given["hookSpecificOutput"]["additionalContext"]
    assert given["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "# Context Handoff" in context
    assert "Next Steps" in context


@pytest.mark.parametrize(
    ("stdin", "code"),
    [
        ("not json", "invalid_request"),
        ("[1, 2]", "invalid_request"),
        ('{"session_id": "../../etc/passwd", "cwd": "/"}', "invalid_id"),
    ],
)
def test_bad_input_never_blocks_the_agent_and_is_logged(
    world: World, stdin: str, code: str
) -> None:
    done = world.hook("Stop", stdin)
    assert done.returncode == 0  # Claude Code goes on (2 would block; 1 shows an error)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert code in (world.data / "hooks.log").read_text()
