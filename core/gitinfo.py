"""Git facts about a working directory, read from the repository's files (no git process).

The branch is what ``HEAD`` names (``ref: refs/heads/NAME``). The repository is
the nearest ``.git`` above the folder: a directory, or a file ``gitdir: PATH``
(a worktree, a submodule). A project's worktrees: the main one (the folder
holding the common ``.git``) and each linked one, named by the ``gitdir`` file
in ``.git/worktrees/*/`` (the path of that worktree's ``.git`` file; a linked
worktree's own git dir points to the common one with ``commondir``). Only
small regular files are read: nothing on disk is trusted, and a FIFO named
``HEAD`` must not block a launch.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

HEAD_REF = "ref: refs/heads/"
GITDIR = "gitdir:"
MAX_BYTES = 4096  # HEAD and a .git file are one short line
MAX_WORKTREES = 1000  # entries of .git/worktrees looked at (more is absurd)


def _small_text(path: Path) -> str | None:
    """A short regular file's text, or None (missing, not regular, too big, unreadable)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        return os.read(fd, MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _repository(folder: Path) -> tuple[Path, Path] | None:
    """The worktree holding ``folder`` (it or its nearest ancestor with a ``.git``)
    and that worktree's git directory, if any."""
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        try:
            mode = dot_git.lstat().st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(mode):
            return candidate, dot_git
        if stat.S_ISREG(mode):
            text = _small_text(dot_git)
            if text is None or not text.startswith(GITDIR):
                return None
            return candidate, candidate / text[len(GITDIR) :].strip()
        return None
    return None


def _git_dir(folder: Path) -> Path | None:
    """The repository directory of ``folder`` or its nearest ancestor, if any."""
    found = _repository(folder)
    return found[1] if found else None


def _resolved(folder: Path) -> Path | None:
    try:
        return folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def current_branch(cwd: Path) -> str | None:
    """The checked-out branch, ``None`` outside a repository or on a detached HEAD."""
    try:
        folder = cwd.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    git_dir = _git_dir(folder)
    if git_dir is None:
        return None
    head = _small_text(git_dir / "HEAD")
    if head is None or not head.startswith(HEAD_REF):
        return None  # a detached HEAD holds a commit id
    name = head[len(HEAD_REF) :].strip()
    return name or None


def project_roots(cwd: Path) -> tuple[str, ...] | None:
    """The folders of the project holding ``cwd``: its main worktree first, then
    every linked worktree (by path); None outside a repository.

    A submodule, or a worktree whose common directory cannot be read, is a
    project of its own (only its own folder).
    """
    folder = _resolved(cwd)
    found = _repository(folder) if folder is not None else None
    if found is None:
        return None
    worktree, git_dir = found
    common = git_dir
    pointer = _small_text(git_dir / "commondir")
    if pointer is not None and pointer.strip():
        common = git_dir / pointer.strip()
    common = _resolved(common) or common
    main = common.parent if common.name == ".git" else worktree
    linked = {str(root) for root in _linked_worktrees(common)}
    first = str(_resolved(main) or main)
    return (first, *sorted(linked - {first}))


def _linked_worktrees(common: Path) -> list[Path]:
    """The folders of the linked worktrees the common git directory lists."""
    try:
        entries = list(os.scandir(common / "worktrees"))[:MAX_WORKTREES]
    except (OSError, ValueError):
        return []
    roots = []
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        text = _small_text(Path(entry.path) / "gitdir")
        if text is None or not text.strip():
            continue
        dot_git = Path(text.strip())
        if not dot_git.is_absolute():
            dot_git = Path(entry.path) / dot_git
        root = _resolved(dot_git.parent)
        if root is not None:
            roots.append(root)
    return roots


def worktree_root(cwd: Path) -> Path | None:
    """The top folder of the worktree holding ``cwd`` (where its ``.git`` is); None
    outside a repository."""
    folder = _resolved(cwd)
    found = _repository(folder) if folder is not None else None
    return found[0] if found is not None else None
