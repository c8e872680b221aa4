"""Hand-off retention (seed 003 §6): finished chains to ``archive/``, old archives pruned.

A chain is *finished* when the session now holding its work (the newest of the
hand-off chain) is archived or gone: the person is done with it. Its documents
move to ``handoffs/archive/`` (status ``archived``). Archived documents older
than the project's ``retention_days`` are deleted, with their registry rows; a
registered document whose file is gone is forgotten. Documents of work still
going on are never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from core.context.thresholds import effective_context
from core.continuation.service import repository_of
from core.documents.handoff_files import archive_file, created_from_name, expired_archive_files
from core.errors import DelegateError
from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator

SCAN_LIMIT = 10_000  # registered hand-offs looked at in one prune


@dataclass
class PruneReport:
    """What a prune did (or, with ``dry_run``, would do): paths, oldest first."""

    archived: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # registered, but the file was gone
    kept: int = 0  # documents of work still going on


async def prune_handoffs(
    orchestrator: AgentOrchestrator, *, now: datetime | None = None, dry_run: bool = False
) -> PruneReport:
    """Archive finished chains, delete expired archives; see the module docstring."""
    orch = orchestrator
    now = now or orch.clock()
    report = PruneReport()
    documents = await orch.store.documents.find(DocumentKind.HANDOFF, limit=SCAN_LIMIT)
    repos: set[Path] = set()
    for document in sorted(documents, key=lambda d: d.created_at):
        path = Path(document.path)
        repo = repository_of(path)
        if repo is not None:
            repos.add(repo)
        if not await asyncio.to_thread(_is_file, path):
            report.forgotten.append(document.path)
            if not dry_run:
                await orch.store.documents.remove([document.document_id])
            continue
        if document.status is DocumentStatus.ARCHIVED:
            if document.created_at < now - _retention(orch, repo):
                report.deleted.append(document.path)
                if not dry_run:
                    await asyncio.to_thread(_unlink, path)
                    await orch.store.documents.remove([document.document_id])
            continue
        if not await _finished(orch, document):
            report.kept += 1
            continue
        if dry_run:
            report.archived.append(document.path)
            continue
        moved = await asyncio.to_thread(archive_file, path)
        await orch.store.documents.set_path(document.document_id, str(moved))
        await orch.store.documents.set_status(document.document_id, DocumentStatus.ARCHIVED)
        report.archived.append(str(moved))
    # Archived files nobody registered (copied in, or from another data folder).
    registered = {d.path for d in documents}
    for repo in sorted(repos):
        before = now - _retention(orch, repo)
        for path in await asyncio.to_thread(expired_archive_files, repo, before):
            if str(path) in registered or str(path) in report.deleted:
                continue
            report.deleted.append(str(path))
            if not dry_run:
                await asyncio.to_thread(_unlink, path)
    return report


def _retention(orch: AgentOrchestrator, repo: Path | None) -> timedelta:
    try:
        days = effective_context(orch.settings, repo or Path.cwd()).retention_days
    except DelegateError:  # a broken project file: the data folder's setting holds
        days = orch.settings.context.retention_days
    return timedelta(days=days)


async def _finished(orch: AgentOrchestrator, document: ContextDocument) -> bool:
    """Whether the work the document carried ended (its chain's newest session archived
    or gone). A document no session wrote or used stays until a person prunes it by hand."""
    start = document.source_session or (document.consumers[0] if document.consumers else None)
    if start is None:
        return False
    store = orch.store
    if not await store.sessions.exists(start):
        return True
    newest = await store.sessions.newest_in_chain(start)
    for member in (newest, *document.consumers):
        if not await store.sessions.exists(member):
            continue
        if (await store.sessions.get(member)).archived_at is None:
            return False
    return True


def _is_file(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if created_from_name(path) is not None:  # only a hand-off's own name is ever deleted
            os.unlink(path)
