"""Pruning treats a chain of hand-offs as one: a finished chain of three documents is
archived whole, kept whole while its work goes on, and deleted whole once past
``retention_days`` (seed 003 §6 and edge case 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from handoff_support import config_with_agents, make_repo

from core.continuation import Continuation
from core.continuation.retention import prune_handoffs
from core.documents.handoff_files import ARCHIVE_DIR, handoffs_dir
from core.models import ContextDocument, DocumentKind, DocumentStatus, RunStatus
from core.orchestrator import AgentOrchestrator

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def _chain_of_three(
    orch: AgentOrchestrator, repo: Path, now: list[datetime]
) -> tuple[list[str], list[ContextDocument]]:
    """Four sessions, three hand-offs ten days apart: the chain's documents, oldest first."""
    [handle] = await orch.delegate(prompt="long task", agent_id="writer", cwd=str(repo))
    assert (await handle.wait()).status is RunStatus.COMPLETED
    ids, documents = [handle.conversation_id], []
    service = Continuation(orch)
    for _ in range(3):
        now[0] += timedelta(days=10)
        outcome = await service.hand_off(ids[-1])
        assert outcome.successor_id is not None, outcome
        assert outcome.document is not None
        ids.append(outcome.successor_id)
        documents.append(outcome.document)
    chain = await orch.store.documents.chain(documents[-1].document_id)
    assert [d.document_id for d in chain] == [d.document_id for d in documents]
    return ids, documents


async def test_a_finished_chain_of_three_is_archived_and_deleted_whole(tmp_path: Path) -> None:
    now = [START]
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"), clock=lambda: now[0])
    try:
        repo = make_repo(tmp_path)
        ids, documents = await _chain_of_three(orch, repo, now)

        going = await prune_handoffs(orch, dry_run=True)
        assert going.archived == []
        assert going.kept == 3

        # The person is done: the session now holding the work is archived.
        await orch.archive(ids[-1])
        dry = await prune_handoffs(orch, dry_run=True)
        assert dry.archived == [d.path for d in documents]
        report = await prune_handoffs(orch)
        assert len(report.archived) == 3
        assert report.kept == 0
        archive = handoffs_dir(repo) / ARCHIVE_DIR
        for document, moved in zip(documents, report.archived, strict=True):
            assert Path(moved) == archive / Path(document.path).name
            assert Path(moved).is_file()
            assert not Path(document.path).exists()
            stored = await orch.store.documents.get(document.document_id)
            assert stored.status is DocumentStatus.ARCHIVED
            assert stored.path == moved

        # Retention counts from the chain's newest document: the oldest one, 20 days
        # older, is not deleted before the rest of its chain.
        newest = documents[-1].created_at
        soon = await prune_handoffs(orch, now=newest + timedelta(days=89))
        assert soon.deleted == []
        later = await prune_handoffs(orch, now=newest + timedelta(days=91))
        assert later.deleted == report.archived
        assert all(not Path(p).exists() for p in report.archived)
        assert await orch.store.documents.find(DocumentKind.HANDOFF) == []
    finally:
        await orch.close(wait=False)


async def test_a_chain_half_archived_before_is_finished_whole(tmp_path: Path) -> None:
    """A prune that archived only part of a chain (as one used to) is completed."""
    now = [START]
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"), clock=lambda: now[0])
    try:
        repo = make_repo(tmp_path)
        ids, documents = await _chain_of_three(orch, repo, now)
        await orch.archive(ids[-1])
        # Only the newest document archived, as the old prune left it.
        from core.documents.handoff_files import archive_file

        moved = archive_file(Path(documents[-1].path))
        await orch.store.documents.set_path(documents[-1].document_id, str(moved))
        await orch.store.documents.set_status(documents[-1].document_id, DocumentStatus.ARCHIVED)

        report = await prune_handoffs(orch)
        assert report.archived == [
            str(handoffs_dir(repo) / ARCHIVE_DIR / Path(d.path).name) for d in documents[:2]
        ]
        for document in documents:
            stored = await orch.store.documents.get(document.document_id)
            assert stored.status is DocumentStatus.ARCHIVED
    finally:
        await orch.close(wait=False)


async def test_a_chain_whose_work_goes_on_is_kept_whole(tmp_path: Path) -> None:
    """An older member archived by hand does not finish the chain: its newest holds the work."""
    now = [START]
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"), clock=lambda: now[0])
    try:
        repo = make_repo(tmp_path)
        ids, documents = await _chain_of_three(orch, repo, now)
        await orch.archive(ids[0])
        await orch.archive(ids[1])
        report = await prune_handoffs(orch)
        assert report.archived == []
        assert report.kept == 3
        assert all(Path(d.path).is_file() for d in documents)
    finally:
        await orch.close(wait=False)
