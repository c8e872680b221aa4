"""The branch of a launch's folder, read from the repository's own files."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from core.gitinfo import current_branch, project_roots


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a", encoding="utf-8")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_the_checked_out_branch_from_the_root_and_from_below(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "checkout", "-q", "-b", "feature/login")
    (root / "src" / "deep").mkdir(parents=True)
    assert current_branch(root) == "feature/login"
    assert current_branch(root / "src" / "deep") == "feature/login"


def test_a_detached_head_and_no_repository_have_no_branch(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "checkout", "-q", "--detach")
    assert current_branch(root) is None
    outside = tmp_path / "plain"
    outside.mkdir()
    assert current_branch(outside) is None
    assert current_branch(tmp_path / "missing") is None


def test_a_worktree_names_its_own_branch(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    assert current_branch(tmp_path / "side") == "side"
    assert current_branch(root) == "main"


def test_a_head_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    root = repo(tmp_path)
    head = root / ".git" / "HEAD"
    head.unlink()
    os.mkfifo(head)  # reading a FIFO with no writer would block forever
    started = time.monotonic()
    assert current_branch(root) is None
    assert time.monotonic() - started < 5


def test_project_roots_are_the_main_worktree_and_every_linked_one(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "worktree", "add", "-q", "-b", "one", str(tmp_path / "wt-one"))
    git(root, "worktree", "add", "-q", "-b", "two", str(tmp_path / "elsewhere" / "wt-two"))
    (tmp_path / "wt-one" / "src").mkdir()
    expected = (
        str(root.resolve()),
        str((tmp_path / "elsewhere" / "wt-two").resolve()),
        str((tmp_path / "wt-one").resolve()),
    )
    assert project_roots(root) == expected
    # From a linked worktree, and from below one, the same project.
    assert project_roots(tmp_path / "wt-one" / "src") == expected
    assert project_roots(tmp_path / "elsewhere" / "wt-two") == expected
    assert project_roots(tmp_path) is None


def test_project_roots_of_a_repository_without_worktrees_and_a_hostile_one(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    assert project_roots(root / ".") == (str(root.resolve()),)
    # A worktrees entry whose gitdir is a FIFO, or missing, is skipped, never read.
    fifo_entry = root / ".git" / "worktrees" / "fifo"
    fifo_entry.mkdir(parents=True)
    os.mkfifo(fifo_entry / "gitdir")
    (root / ".git" / "worktrees" / "empty").mkdir()
    assert project_roots(root) == (str(root.resolve()),)
