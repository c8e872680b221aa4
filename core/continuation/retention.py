"""Hand-off retention (seed 003 §6): finished chains to ``archive/``, old archives pruned.

A chain (its documents, each following the one before) is judged whole. It is
*finished* when the session now holding its work (the newest of the hand-off
chain) is archived or gone: the person is done with it. All its documents move
to ``handoffs/archive/`` (status ``archived``). An archived chain whose newest
document is older than the project's ``retention_days`` is deleted, every
document with its registry row; a registered document whose file is gone is
forgotten. Documents of work still going on are never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from core.context.thresholds import effective_context
from core.continuation.handoff_text import repository_of
from core.documents.handoff_files import archive_file, created_from_name, expired_archive_files
from core.errors import DelegateError
from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator

if TYPE_CHECKING:
    from core.store.documents import DocumentsRepository
    from core.store.sessions import SessionsRepository

SCAN_LIMIT = 10_000  # registered hand-offs looked at in one prune


@dataclass
class PruneReport:
    """What a prune did (or, with ``dry_run``, would do): paths, oldest first."""

    archived: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # registered, but the file was gone
    kept: int = 0  # documents of work still going on


async def prune_handoffs(
    orchestrator: AgentOrchestrator,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    documents: DocumentsRepository | None = None,
    sessions: SessionsRepository | None = None,
) -> PruneReport:
    """Archive finished chains, delete expired archives; see the module docstring.

    A chain's documents (linked by the hand-off each follows) are judged as one:
    archived together once its work is finished, deleted together once its
    newest document is older than ``retention_days``. ``documents`` and
    ``sessions``: the repositories read and changed (the orchestrator's store's
    when not given).
    """
    orch = orchestrator
    registry = documents or orch.store.documents
    session_repo = sessions or orch.store.sessions
    now = now or orch.clock()
    report = PruneReport()
    handoffs = await registry.find(DocumentKind.HANDOFF, limit=SCAN_LIMIT)
    repos: set[Path] = set()
    present: list[ContextDocument] = []
    for document in sorted(handoffs, key=lambda d: d.created_at):
        path = Path(document.path)
        repo = repository_of(path)
        if repo is not None:
            repos.add(repo)
        if not await asyncio.to_thread(_is_file, path):
            report.forgotten.append(document.path)
            if not dry_run:
                await registry.remove([document.document_id])
            continue
        present.append(document)
    for chain in _chains(present):
        if all(d.status is DocumentStatus.ARCHIVED for d in chain):
            newest = chain[-1]
            if newest.created_at < now - _retention(orch, repository_of(Path(newest.path))):
                for document in chain:
                    report.deleted.append(document.path)
                    if not dry_run:
                        await asyncio.to_thread(_unlink, Path(document.path))
                        await registry.remove([document.document_id])
            continue
        if not await _chain_finished(session_repo, chain):
            report.kept += sum(d.status is not DocumentStatus.ARCHIVED for d in chain)
            continue
        for document in chain:
            if document.status is DocumentStatus.ARCHIVED:
                continue
            if dry_run:
                report.archived.append(document.path)
                continue
            moved = await asyncio.to_thread(archive_file, Path(document.path))
            await registry.set_path(document.document_id, str(moved))
            await registry.set_status(document.document_id, DocumentStatus.ARCHIVED)
            report.archived.append(str(moved))
    # Archived files nobody registered (copied in, or from another data folder).
    registered = {d.path for d in handoffs}
    for repo in sorted(repos):
        before = now - _retention(orch, repo)
        for path in await asyncio.to_thread(expired_archive_files, repo, before):
            if str(path) in registered or str(path) in report.deleted:
                continue
            report.deleted.append(str(path))
            if not dry_run:
                await asyncio.to_thread(_unlink, path)
    return report


def _chains(documents: list[ContextDocument]) -> list[list[ContextDocument]]:
    """The documents grouped by chain (each follows the one before it), oldest first in
    each; chains in the order of their oldest document. A link to a document not in
    ``documents`` ends the walk (it is gone, or past the scan)."""
    by_id = {d.document_id: d for d in documents}
    root: dict[str, str] = {}

    def find(document_id: str) -> str:
        seen: list[str] = []
        current = document_id
        while current in root and root[current] != current:
            seen.append(current)
            current = root[current]
        for member in seen:  # shortened for the next walk
            root[member] = current
        return current

    for document in documents:
        root.setdefault(document.document_id, document.document_id)
        previous = document.previous_id
        if previous is not None and previous in by_id:
            root.setdefault(previous, previous)
            a, b = find(document.document_id), find(previous)
            if a != b:
                root[a] = b
    groups: dict[str, list[ContextDocument]] = {}
    for document in documents:  # already oldest first
        groups.setdefault(find(document.document_id), []).append(document)
    return list(groups.values())


async def _chain_finished(sessions: SessionsRepository, chain: list[ContextDocument]) -> bool:
    """Whether the work a chain carried ended: every session that wrote or used one of
    its documents has the newest of its hand-off chain archived or gone. A chain no
    session wrote or used stays until a person prunes it by hand."""
    members = {
        session
        for document in chain
        for session in (document.source_session, *document.consumers)
        if session is not None
    }
    if not members:
        return False
    for member in sorted(members):
        if not await sessions.exists(member):
            continue
        newest = await sessions.newest_in_chain(member)
        if not await sessions.exists(newest):
            continue
        if (await sessions.get(newest)).archived_at is None:
            return False
    return True


def _retention(orch: AgentOrchestrator, repo: Path | None) -> timedelta:
    try:
        days = effective_context(orch.settings, repo or Path.cwd()).retention_days
    except DelegateError:  # a broken project file: the data folder's setting holds
        days = orch.settings.context.retention_days
    return timedelta(days=days)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if created_from_name(path) is not None:  # only a hand-off's own name is ever deleted
            os.unlink(path)
