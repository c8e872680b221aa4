"""A Claude Code session that starts with a slash command (after ``/clear``, say) and has
no prompt yet is titled with the command as typed, never with Claude Code's tags."""

from __future__ import annotations

import pytest
from source_homes import Homes
from sources_support import SESSION, user, write

from core.orchestrator import AgentOrchestrator

CLEAR = (
    "<command-name>/clear</command-name>\n"
    "            <command-message>clear</command-message>\n"
    "            <command-args></command-args>"
)
MODEL = (
    "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
    "<command-args>sonnet</command-args>"
)


@pytest.mark.parametrize(
    ("first", "title"),
    [
        (CLEAR, "/clear"),
        (MODEL, "/model sonnet"),
        ("<local-command-stdout>Set model to sonnet</local-command-stdout>", "Set model to sonnet"),
        ("<bash-input>ls -la</bash-input>", "! ls -la"),
    ],
)
async def test_a_session_with_only_commands_is_titled_as_they_were_typed(
    orch: AgentOrchestrator, empty_homes: Homes, first: str, title: str
) -> None:
    write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", first))
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    session = await orch.get_session(SESSION)
    assert session.title == title
    assert "<" not in session.title


async def test_a_prompt_after_the_command_still_titles_the_session(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", CLEAR),
        user("u2", "fix the flaky login test", "2026-03-01T10:00:02.000Z"),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert (await orch.get_session(SESSION)).title == "fix the flaky login test"
