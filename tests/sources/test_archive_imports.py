"""Archived and purged imports: an archived import stays archived when its
transcript grows; a purged one never comes back, and its transcript is never touched."""

from __future__ import annotations

import pytest
from source_homes import Homes

from core.errors import UnknownConversation
from core.orchestrator import AgentOrchestrator

CLAUDE_SESSION = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"


async def test_a_purged_import_stays_gone_and_its_transcript_stays_on_disk(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    transcript = next(realdata.projects.rglob(f"{CLAUDE_SESSION}.jsonl"))
    content = transcript.read_bytes()
    archived = await orch.archive(CLAUDE_SESSION)
    # An archived import stays archived when it is imported again.
    with transcript.open("ab") as out:
        out.write(b"\n")
    await orch.import_sources(realdata.claude, realdata.codex)
    assert (await orch.get_session(CLAUDE_SESSION)).archived_at == archived.archived_at

    await orch.purge(CLAUDE_SESSION)
    assert transcript.read_bytes() == content + b"\n"
    with transcript.open("ab") as out:  # it grows again: read again, still not brought back
        out.write(b"\n")
    report = await orch.import_sources(realdata.claude, realdata.codex)
    assert report.sessions_skipped_dismissed >= 1
    with pytest.raises(UnknownConversation):
        await orch.get_session(CLAUDE_SESSION)
