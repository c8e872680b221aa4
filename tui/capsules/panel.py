"""What the panel knows of capsules: the registry row a session's capsule has (for the
stale mark), which capsule the editor opens for a session, and the launch form's
capsule choice.

Reads only: the registry (``store.documents``) and the session's folder. The editor
itself is :class:`tui.capsules.editor.CapsuleEditorScreen`.
"""

from __future__ import annotations

import asyncio
import stat
from dataclasses import dataclass
from pathlib import Path

from core.capsules.storage import DETACHED, LATEST, list_capsules, resolve_capsule
from core.errors import UnknownDocument
from core.gitinfo import current_branch, worktree_root
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
        return await orchestrator.document(capsule_id)
    except UnknownDocument:
        return None


async def editor_target(orchestrator: AgentOrchestrator, session: Session) -> EditorTarget | None:
    """The repository of ``session`` (the worktree holding its folder, else the folder)
    and its newest draft capsule still on disk; None when its folder is gone."""
    repo = await asyncio.to_thread(_repository, Path(session.cwd))
    if repo is None:
        return None
    drafts = await orchestrator.find_documents(
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


# --- the launch form's capsule choice -------------------------------------

NO_CAPSULE, LATEST_CAPSULE, CAPSULE_FILE = "none", "latest", "file"


def launch_capsule(cwd: str, choice: str, path: str) -> str | None:
    """What the launch form passes as ``capsule``: None, ``latest`` (checked to exist for
    the branch checked out in ``cwd``) or the file's resolved path inside the repository.

    Raises :class:`CapsuleNotFound` / :class:`CapsulePathUnsafe` (said in the form).
    """
    if choice == NO_CAPSULE:
        return None
    repo = _repository(Path(cwd).expanduser()) or Path(cwd)
    if choice == LATEST_CAPSULE:
        resolve_capsule(repo, LATEST)
        return LATEST
    return str(resolve_capsule(repo, path.strip()))


def latest_note(cwd: str) -> str:
    """``latest on feature-x: 20261121T205000Z.md`` (or that the branch has none yet)."""
    repo = _repository(Path(cwd).expanduser())
    if repo is None:
        return "not a folder: no capsule to take"
    if worktree_root(repo) is None:
        return "not in a git repository: there is no branch to take the latest capsule of"
    branch = current_branch(repo) or DETACHED
    found = list_capsules(repo, branch)
    if not found:
        return f"{branch} has no capsule yet (`delegate capsule new`, or f2 on a session)"
    return f"latest on {branch}: {found[0].name}"
