"""Git facts about a working directory (gitpython, blocking: call in a thread)."""

from __future__ import annotations

from pathlib import Path


def current_branch(cwd: Path) -> str | None:
    """The checked-out branch, ``None`` outside a repository or on a detached HEAD."""
    try:
        import git  # deferred: gitpython's import is slow and only launches need it
    except ImportError:  # pragma: no cover - git executable missing
        return None
    try:
        repo = git.Repo(cwd, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError):
        return None
    try:
        return str(repo.active_branch.name)
    except (TypeError, ValueError):  # detached HEAD or unborn branch
        return None
    finally:
        repo.close()
