"""A transcript that grows a turn at a time (a hook imports it after every turn) keeps
a sound search index: every turn's words are found, and the index never reads as damaged."""

from __future__ import annotations

from pathlib import Path

from hostile_trees import claude_lines, jsonl

from core.orchestrator import AgentOrchestrator

SID = "5b0c3f6e-1d7a-4e8e-9a51-2f3c4d5e6f70"


async def test_each_turn_appended_and_imported_is_found(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    transcript = claude / "projects" / "-project" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    orch = await AgentOrchestrator.open(tmp_path / "data")
    try:
        lines: list[dict[str, object]] = []
        for turn in range(8):
            for line in claude_lines(SID, f"turn{turn} marmalade{turn}"):
                line["uuid"] = f"{line['uuid']}-{turn}"
                lines.append(line)
            transcript.write_bytes(jsonl(lines))  # the same bytes, and one turn more
            await orch.import_sources(claude, tmp_path / "no-codex", workers=0)
            page = await orch.search_sessions(f"marmalade{turn}")
            assert [r.session.conversation_id for r in page.results] == [SID], turn
    finally:
        await orch.close()
