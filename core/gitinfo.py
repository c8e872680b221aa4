"""Git facts about a working directory, read from the repository's files (no git process).

The branch is what ``HEAD`` names (``ref: refs/heads/NAME``). The repository is
the nearest ``.git`` above the folder: a directory, or a file ``gitdir: PATH``
(a worktree, a submodule). Only small regular files are read: nothing on disk
is trusted, and a FIFO named ``HEAD`` must not block a launch.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

HEAD_REF = "ref: refs/heads/"
GITDIR = "gitdir:"
MAX_BYTES = 4096  # HEAD and a .git file are one short line


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


def _git_dir(folder: Path) -> Path | None:
    """The repository directory of ``folder`` or its nearest ancestor, if any."""
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        try:
            mode = dot_git.lstat().st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(mode):
            return dot_git
        if stat.S_ISREG(mode):
            text = _small_text(dot_git)
            if text is None or not text.startswith(GITDIR):
                return None
            return candidate / text[len(GITDIR) :].strip()
        return None
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
