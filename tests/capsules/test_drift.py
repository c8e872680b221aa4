"""Drift of a capsule's references in a real git repository made in tmp_path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.capsules.drift import ReferenceUnsafe, blob_id, check_drift, reference_for
from core.capsules.model import Reference


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "src" / "app.py").write_text("print('v1')\n", encoding="utf-8")
    (root / "README.md").write_text("# app\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_the_blob_id_is_what_git_computes(repo: Path) -> None:
    for data in (b"", b"print('v1')\n", bytes(range(256)) * 5000):
        (repo / "data.bin").write_bytes(data)
        assert blob_id(data) == git(repo, "hash-object", "data.bin")


def test_a_reference_records_the_tracked_file_as_it_is_now(repo: Path) -> None:
    assert reference_for(repo, "src/app.py") == Reference(
        path="src/app.py", blob=git(repo, "rev-parse", "HEAD:src/app.py")
    )
    # An edit not yet committed is what the writer saw: its id is recorded.
    (repo / "src" / "app.py").write_text("print('v2')\n", encoding="utf-8")
    assert reference_for(repo, "./src/app.py").blob == git(repo, "hash-object", "src/app.py")
    assert reference_for(repo, str(repo / "README.md")).path == "README.md"


def test_untracked_staged_and_missing_files(repo: Path) -> None:
    (repo / "notes.txt").write_text("scratch\n", encoding="utf-8")
    assert reference_for(repo, "notes.txt") == Reference(path="notes.txt", blob=None)
    git(repo, "add", "notes.txt")
    assert reference_for(repo, "notes.txt").blob == git(repo, "hash-object", "notes.txt")
    assert reference_for(repo, "gone.py") == Reference(path="gone.py", blob=None)


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", "src/../../x", "", "a\\b"])
def test_a_path_out_of_the_repository_is_refused(repo: Path, path: str) -> None:
    with pytest.raises(ReferenceUnsafe) as raised:
        reference_for(repo, path)
    assert raised.value.code == "capsule_reference_unsafe"


def test_every_drift_state_after_changing_files(repo: Path) -> None:
    (repo / "lib.py").write_text("x = 1\n", encoding="utf-8")
    (repo / "docs.md").write_text("old\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "more")
    (repo / "scratch.txt").write_text("mine\n", encoding="utf-8")
    references = [
        reference_for(repo, name)
        for name in ("src/app.py", "lib.py", "README.md", "docs.md", "scratch.txt")
    ]
    assert [d.state for d in check_drift(repo, references)] == ["unchanged"] * 4 + ["untracked"]
    recorded_app = references[0].blob

    (repo / "src" / "app.py").write_text("print('edited')\n", encoding="utf-8")  # not committed
    (repo / "lib.py").write_text("x = 2\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "lib changes on the branch")  # commits app.py too
    (repo / "src" / "app.py").write_text("print('edited again')\n", encoding="utf-8")
    (repo / "README.md").unlink()
    drifts = check_drift(repo, references)

    assert [(d.path, d.state) for d in drifts] == [
        ("src/app.py", "changed_in_worktree"),
        ("lib.py", "changed_on_branch"),
        ("README.md", "missing"),
        ("docs.md", "unchanged"),
        ("scratch.txt", "untracked"),
    ]
    app = drifts[0]
    assert app.recorded == recorded_app
    assert app.worktree == git(repo, "hash-object", "src/app.py")
    assert app.head == git(repo, "rev-parse", "HEAD:src/app.py")
    assert drifts[2].head == git(repo, "rev-parse", "HEAD:README.md")
    assert drifts[2].worktree is None
    assert [d.stale for d in drifts] == [True, True, True, False, False]


def test_a_capsule_written_over_uncommitted_edits_is_unchanged_once_committed(
    repo: Path,
) -> None:
    (repo / "src" / "app.py").write_text("print('wip')\n", encoding="utf-8")
    reference = reference_for(repo, "src/app.py")
    [before] = check_drift(repo, [reference])
    assert before.state == "unchanged"
    assert before.head != before.recorded
    git(repo, "commit", "-q", "-am", "wip")
    [after] = check_drift(repo, [reference])
    assert after.state == "unchanged"
    assert after.head == after.recorded


def test_unsafe_links_and_non_files_are_never_read(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("outside\n", encoding="utf-8")
    os.symlink(outside, repo / "link.txt")
    os.symlink(tmp_path, repo / "linked_dir")
    recorded = blob_id(b"outside\n")
    references = [
        Reference(path="../secret.txt", blob=recorded),
        Reference(path="link.txt", blob=recorded),
        Reference(path="linked_dir/secret.txt", blob=recorded),
        Reference(path="src", blob=recorded),
    ]
    drifts = check_drift(repo, references)
    assert [(d.state, d.worktree) for d in drifts] == [("missing", None)] * 4


def test_outside_a_repository_and_before_the_first_commit(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n", encoding="utf-8")
    assert reference_for(plain, "a.txt").blob is None
    [drift] = check_drift(plain, [Reference(path="a.txt", blob=blob_id(b"a\n"))])
    assert (drift.state, drift.head) == ("unchanged", None)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    (fresh / "a.txt").write_text("b\n", encoding="utf-8")
    [drift] = check_drift(fresh, [Reference(path="a.txt", blob=blob_id(b"a\n"))])
    assert (drift.state, drift.head) == ("changed_in_worktree", None)
