"""Seed 000: a ``Capsule Gap`` a sub-agent reports reaches the main agent — in the next
prompt delegate sends the capsule's source session (once per gap), and through the
``capsule_gaps`` operation of ``delegate_sessions`` (the JSON tool and MCP)."""

from __future__ import annotations

from pathlib import Path

import pytest
from capsule_support import capsule_text, make_repo, save

from core.models import RunStatus
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

GAPPY = '[[rules]]\nmatch = "(?s).*"\nreply = "Done.\\nCapsule Gap: nothing on the db schema"\n'


@pytest.fixture
async def world(data_dir: Path, tmp_path: Path) -> tuple[AgentOrchestrator, Path]:
    script = data_dir / "gappy.toml"
    script.write_text(GAPPY, encoding="utf-8")
    with (data_dir / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[agents.gappy]\nrunner = "scripted"\nscript = "{script}"\n')
    return await AgentOrchestrator.open(data_dir), make_repo(tmp_path)


async def _run(orch: AgentOrchestrator, **request: str) -> tuple[str, str]:
    [handle] = await orch.delegate(**request)  # type: ignore[arg-type]
    run = await handle.wait()
    assert run.status is RunStatus.COMPLETED, run.error
    return handle.conversation_id, run.prompt


async def test_the_source_session_hears_of_the_gap_in_its_next_prompt_once(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    try:
        main, _ = await _run(orch, prompt="plan the work", agent_id="echo", cwd=str(repo))
        # The capsule the main session wrote names it as its source.
        save(
            repo, capsule_text().replace("source_session: 20261123-abc", f"source_session: {main}")
        )
        child, _ = await _run(
            orch, prompt="do the work", agent_id="gappy", cwd=str(repo), capsule="latest"
        )

        _, prompt = await _run(orch, prompt="status?", conversation_id=main)
        assert prompt.endswith("status?")
        block = prompt[: prompt.index("status?")]
        assert "Capsule gaps reported by sub-agents" in block
        assert "nothing on the db schema" in block
        assert child in block
        _, again = await _run(orch, prompt="and now?", conversation_id=main)
        assert again == "and now?"  # told once

        # The tool lists it: for the session told, and for the one that reported it.
        for asked in (main, child):
            answer = await call_tool(
                orch, "delegate_sessions", {"operation": "capsule_gaps", "conversation_id": asked}
            )
            [gap] = answer["gaps"]
            assert gap["note"] == "nothing on the db schema"
            assert (gap["conversation_id"], gap["source_id"]) == (child, main)
            assert gap["capsule_id"] is not None
        everything = await call_tool(orch, "delegate_sessions", {"operation": "capsule_gaps"})
        assert len(everything["gaps"]) == 1
    finally:
        await orch.close(wait=False)


async def test_a_gap_of_a_capsule_from_no_known_session_goes_to_the_parent(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    try:
        save(repo, capsule_text())  # source_session: a marker, no session of ours
        parent, _ = await _run(orch, prompt="plan", agent_id="echo", cwd=str(repo))
        await _run(
            orch,
            prompt="do it",
            agent_id="gappy",
            cwd=str(repo),
            capsule="latest",
            parent_id=parent,
        )
        _, prompt = await _run(orch, prompt="status?", conversation_id=parent)
        assert "nothing on the db schema" in prompt
        answer = await call_tool(
            orch, "delegate_sessions", {"operation": "capsule_gaps", "conversation_id": parent}
        )
        assert [g["source_id"] for g in answer["gaps"]] == [parent]
    finally:
        await orch.close(wait=False)


async def test_capsule_gaps_answers_like_the_other_operations(orch: AgentOrchestrator) -> None:
    assert await call_tool(orch, "delegate_sessions", {"operation": "capsule_gaps"}) == {"gaps": []}
    bad = await call_tool(
        orch, "delegate_sessions", {"operation": "capsule_gaps", "conversation_id": "nope"}
    )
    assert bad["error"]["code"] == "unknown_conversation"
    wrong = await call_tool(orch, "delegate_sessions", {"operation": "capsule_gaps", "name": "x"})
    assert wrong["error"]["code"] == "invalid_request"
