"""The branch of a launch's folder, read from the repository's own files."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from core.gitinfo import current_branch


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
