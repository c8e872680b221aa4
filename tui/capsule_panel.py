"""What the panel knows of capsules: the registry row a session's capsule has (for the
stale mark), and which capsule the editor opens for a session.

Reads only: the registry (``store.documents``) and the session's folder. The editor
itself is :class:`tui.screens.capsule_editor.CapsuleEditorScreen`.
"""

from __future__ import annotations

import asyncio
import stat
from dataclasses import dataclass
from pathlib import Path

from core.errors import UnknownDocument
from core.gitinfo import worktree_root
from core.models import ContextDocument, DocumentKind, DocumentStatus, Session
from core.orchestrator import AgentOrchestrator

DRAFTS_LOOKED_AT = 20  # a session's newest drafts; the first whose file is still there opens


@dataclass(frozen=True)
class EditorTarget:
    """Where the editor works: the repository, and the capsule to open (None: a new one)."""

    repo: Path
    path: Path | None


async def capsule_document(
    orchestrator: AgentOrchestrator, capsule_id: str
) -> ContextDocument | None:
    """The registry row of a session's capsule; None when it is no longer registered
    (pruned, forgotten): the session still names it, with nothing to mark."""
    try:
        return await orchestrator.store.documents.get(capsule_id)
    except UnknownDocument:
        return None


async def editor_target(orchestrator: AgentOrchestrator, session: Session) -> EditorTarget | None:
    """The repository of ``session`` (the worktree holding its folder, else the folder)
    and its newest draft capsule still on disk; None when its folder is gone."""
    repo = await asyncio.to_thread(_repository, Path(session.cwd))
    if repo is None:
        return None
    drafts = await orchestrator.store.documents.find(
        DocumentKind.CAPSULE,
        source_session=session.conversation_id,
        status=DocumentStatus.DRAFT,
        limit=DRAFTS_LOOKED_AT,
    )
    for draft in drafts:
        path = Path(draft.path)
        if await asyncio.to_thread(_regular_file, path):
            return EditorTarget(repo, path)
    return EditorTarget(repo, None)


def _repository(folder: Path) -> Path | None:
    if not folder.is_absolute() or not folder.is_dir():
        return None
    return worktree_root(folder) or folder.resolve()


def _regular_file(path: Path) -> bool:
    """Only a regular file is opened (the registry row is data, not a promise)."""
    try:
        return path.is_absolute() and stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False
