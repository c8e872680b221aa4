"""Where an imported session's transcript lives, for re-importing it after an interactive run."""

from __future__ import annotations

from pathlib import Path

import pytest
from source_homes import Homes

from core.errors import UnknownConversation
from core.orchestrator import AgentOrchestrator

LONG_CLAUDE = "cb2e607c-c758-415a-8b45-c49e4631906a"
LONG_CODEX = "019c8a53-a0dd-7130-bcd7-95445d84846a"


async def test_an_imported_session_names_its_transcript_file(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)

    claude = await orch.transcript_path(LONG_CLAUDE)
    codex = await orch.transcript_path(LONG_CODEX[:13])  # a unique prefix names it too

    assert claude == next(realdata.projects.glob(f"*/{LONG_CLAUDE}.jsonl"))
    assert codex == realdata.codex_file(LONG_CODEX)
    assert isinstance(claude, Path)
    assert claude.is_absolute()


async def test_a_session_delegate_ran_itself_has_no_transcript(orch: AgentOrchestrator) -> None:
    (handle,) = await orch.delegate("hello", agent_id="echo")
    await handle.wait()

    assert await orch.transcript_path(handle.conversation_id) is None


async def test_an_unknown_id_is_a_typed_error(orch: AgentOrchestrator) -> None:
    with pytest.raises(UnknownConversation):
        await orch.transcript_path("--help")
