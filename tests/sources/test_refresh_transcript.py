"""After a person worked in a session in its own CLI, its transcript is read again."""

from __future__ import annotations

from source_homes import Homes
from sources_support import SESSION, append, assistant, line, user, write

from core.orchestrator import AgentOrchestrator


async def test_what_the_cli_appended_is_read(orch: AgentOrchestrator, empty_homes: Homes) -> None:
    path = write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", "hello"))
    await orch.import_sources(empty_homes.claude, empty_homes.codex, workers=0)
    assert (await orch.get_session(SESSION)).metrics.messages == 1
    append(path, line(assistant("a1", "hi", "m1")) + line(user("u2", "and then")))

    session = await orch.refresh_transcript(SESSION)

    assert session.metrics.messages == 3


async def test_delegate_own_session_is_returned_as_it_is(orch: AgentOrchestrator) -> None:
    [handle] = await orch.delegate("hello", agent_id="echo")
    await handle.wait()
    before = await orch.get_session(handle.conversation_id)

    assert await orch.refresh_transcript(handle.conversation_id) == before
