"""Retention: finished chains archived, archives past retention_days deleted, nothing else."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from handoff_support import config_with_agents, make_repo

from core.continuation.retention import prune_handoffs
from core.continuation.service import Continuation
from core.documents.handoff_files import ARCHIVE_DIR, handoffs_dir
from core.models import DocumentKind, RunStatus
from core.orchestrator import AgentOrchestrator


async def test_archives_expire_after_retention_days_and_other_files_stay(tmp_path: Path) -> None:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"))
    try:
        repo = make_repo(tmp_path)
        [handle] = await orch.delegate(prompt="work", agent_id="mute", cwd=str(repo))
        assert (await handle.wait()).status is RunStatus.COMPLETED
        outcome = await Continuation(orch).hand_off(handle.conversation_id)
        assert outcome.successor_id is not None
        assert outcome.document is not None
        await orch.archive(outcome.successor_id)
        archive = handoffs_dir(repo) / ARCHIVE_DIR
        stray = archive.parent / "notes.md"
        stray.write_text("a person's own file")

        first = await prune_handoffs(orch)
        [moved] = first.archived
        old_copy = archive / "handoff-2020-01-01-000000.md"  # copied in, never registered
        old_copy.write_text("# Context Handoff\n")
        (archive / "keep-me.md").write_text("not a hand-off's name")

        soon = await prune_handoffs(orch, now=orch.clock() + timedelta(days=89))
        assert soon.deleted == [str(old_copy)]
        assert Path(moved).exists()

        later = await prune_handoffs(orch, now=orch.clock() + timedelta(days=91))
        assert later.deleted == [moved]
        assert not Path(moved).exists()
        assert await orch.store.documents.find(DocumentKind.HANDOFF) == []
        assert stray.exists()
        assert (archive / "keep-me.md").exists()
    finally:
        await orch.close(wait=False)


async def test_a_registered_file_that_is_gone_is_forgotten(tmp_path: Path) -> None:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data", auto_continue=False))
    try:
        repo = make_repo(tmp_path)
        [handle] = await orch.delegate(prompt="work", agent_id="mute", cwd=str(repo))
        await handle.wait()
        outcome = await Continuation(orch).hand_off(handle.conversation_id)
        assert outcome.document is not None
        Path(outcome.document.path).unlink()
        report = await prune_handoffs(orch)
        assert report.forgotten == [outcome.document.path]
        assert await orch.store.documents.find(DocumentKind.HANDOFF) == []
    finally:
        await orch.close(wait=False)
