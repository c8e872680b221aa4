"""Capsule files: named by branch and time, written whole, latest, resolved, pruned."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.capsules.pruning import prune_capsules
from core.capsules.storage import (
    capsule_path,
    capsules_dir,
    list_capsules,
    read_capsule,
    resolve_capsule,
    save_capsule,
)
from core.errors import CapsuleNotFound, CapsulePathUnsafe, DocumentInvalid

WHEN = datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC)


def _git(repo: Path, *args: str, when: datetime | None = None) -> str:
    stamp = (when or WHEN).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def _commit(repo: Path, name: str, when: datetime) -> None:
    (repo / name).write_text(name + "\n")
    _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", name, when=when)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "README", WHEN - timedelta(days=30))
    return repo


def test_a_capsule_lands_under_its_branch_and_time_and_never_over_another(tmp_path: Path) -> None:
    first = save_capsule(tmp_path, "# one\n", branch="feature/context", created=WHEN)
    second = save_capsule(tmp_path, "# two\n", branch="feature/context", created=WHEN)
    expected = tmp_path / ".delegate/capsules/feature/context/20260121T143045Z.md"
    assert first == expected == capsule_path(tmp_path, "feature/context", WHEN)
    assert second.name == "20260121T143045Z-2.md"
    assert read_capsule(first) == "# one\n"
    assert read_capsule(second) == "# two\n"
    # no temporary file left over
    assert {p.name for p in first.parent.iterdir()} == {first.name, second.name}


@pytest.mark.parametrize(
    ("branch", "folder"),
    [
        ("../../etc", "_./_./etc"),
        ("/abs/path", "abs/path"),
        ("..", "_."),
        (".hidden", "_hidden"),
        ("we ird:name*", "we_ird_name_"),
        ("", "_"),
        ("//", "_"),
    ],
)
def test_a_branch_name_never_leaves_the_capsules_folder(
    tmp_path: Path, branch: str, folder: str
) -> None:
    path = save_capsule(tmp_path, "# x\n", branch=branch, created=WHEN)
    assert path.parent == capsules_dir(tmp_path) / folder
    assert path.resolve().is_relative_to(capsules_dir(tmp_path).resolve())


def test_a_symlinked_folder_is_refused_and_nothing_lands_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    (repo / ".delegate/capsules").mkdir(parents=True)
    (repo / ".delegate/capsules/main").symlink_to(outside)
    with pytest.raises(DocumentInvalid, match="symbolic link"):
        save_capsule(repo, "# x\n", branch="main", created=WHEN)
    assert list(outside.iterdir()) == []


def test_an_interrupted_write_leaves_nothing_half_written(tmp_path: Path) -> None:
    # A real process whose files may not grow past 1 kB: the write fails half way.
    script = textwrap.dedent(
        f"""
        import resource, signal
        from datetime import datetime, UTC
        from pathlib import Path
        from core.capsules.storage import save_capsule
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        try:
            save_capsule(Path({str(tmp_path)!r}), "x" * 10_000, branch="main",
                         created=datetime(2026, 1, 1, tzinfo=UTC))
        except OSError:
            raise SystemExit(3)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=Path.cwd(), check=False)
    assert done.returncode == 3
    assert list((capsules_dir(tmp_path) / "main").iterdir()) == []


def test_latest_is_the_newest_of_the_branch_whatever_was_written_last(tmp_path: Path) -> None:
    newer = save_capsule(tmp_path, "# new\n", branch="main", created=WHEN)
    same_second = save_capsule(tmp_path, "# again\n", branch="main", created=WHEN)
    save_capsule(tmp_path, "# old\n", branch="main", created=WHEN - timedelta(days=1))
    save_capsule(tmp_path, "# other\n", branch="other", created=WHEN + timedelta(days=1))
    assert list_capsules(tmp_path, "main")[:2] == [same_second, newer]
    assert resolve_capsule(tmp_path, "latest", "main") == same_second
    assert len(list_capsules(tmp_path)) == 4
    assert list_capsules(tmp_path)[0].parent.name == "other"


def test_latest_defaults_to_the_checked_out_branch(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _git(repo, "checkout", "-q", "-b", "feature/x")
    mine = save_capsule(repo, "# mine\n", branch="feature/x", created=WHEN)
    save_capsule(repo, "# main\n", branch="main", created=WHEN + timedelta(hours=1))
    assert resolve_capsule(repo, "latest") == mine


def test_latest_without_a_capsule_is_a_typed_error_naming_the_branch(tmp_path: Path) -> None:
    with pytest.raises(CapsuleNotFound, match="'main' has no capsule") as raised:
        resolve_capsule(tmp_path, "latest", "main")
    assert raised.value.code == "capsule_not_found"


def test_a_named_path_resolves_inside_the_repository_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    saved = save_capsule(repo, "# x\n", branch="main", created=WHEN)
    relative = saved.relative_to(repo).as_posix()
    assert resolve_capsule(repo, relative, "main") == saved.resolve()
    assert resolve_capsule(repo, str(saved), "main") == saved.resolve()
    (tmp_path / "outside.md").write_text("# outside\n")
    with pytest.raises(CapsulePathUnsafe, match="outside the repository") as raised:
        resolve_capsule(repo, "../outside.md", "main")
    assert raised.value.code == "capsule_path_unsafe"
    with pytest.raises(CapsulePathUnsafe):
        resolve_capsule(repo, str(tmp_path / "outside.md"), "main")
    (repo / "link.md").symlink_to(saved)
    with pytest.raises(CapsulePathUnsafe, match="symbolic link"):
        resolve_capsule(repo, "link.md", "main")
    (repo / "escape.md").symlink_to(tmp_path / "outside.md")
    with pytest.raises(CapsulePathUnsafe):
        resolve_capsule(repo, "escape.md", "main")
    os.mkfifo(repo / "fifo.md")
    with pytest.raises(CapsulePathUnsafe, match="not a regular file"):
        resolve_capsule(repo, "fifo.md", "main")
    with pytest.raises(CapsuleNotFound, match="no capsule file"):
        resolve_capsule(repo, "missing.md", "main")


def test_reading_refuses_what_is_not_a_capsule_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.md")
    with pytest.raises(DocumentInvalid, match="not a regular file"):
        read_capsule(tmp_path / "fifo.md")
    (tmp_path / "big.md").write_text("x" * 300_000)
    with pytest.raises(DocumentInvalid, match="at most"):
        read_capsule(tmp_path / "big.md")


def test_listing_skips_links_and_foreign_names(tmp_path: Path) -> None:
    saved = save_capsule(tmp_path, "# x\n", branch="main", created=WHEN)
    folder = saved.parent
    (folder / "notes.md").write_text("not a capsule name\n")
    (folder / "20260101T000000Z.md").symlink_to(saved)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "20260101T000000Z.md").write_text("# planted\n")
    (capsules_dir(tmp_path) / "planted").symlink_to(outside)
    assert list_capsules(tmp_path) == [saved]
    assert list_capsules(tmp_path, "planted") == []


def test_prune_older_than_deletes_only_old_capsules(tmp_path: Path) -> None:
    old = save_capsule(tmp_path, "# old\n", branch="a", created=WHEN - timedelta(days=40))
    recent = save_capsule(tmp_path, "# new\n", branch="a", created=WHEN - timedelta(days=2))
    other_old = save_capsule(tmp_path, "# b\n", branch="b", created=WHEN - timedelta(days=31))
    removed = prune_capsules(tmp_path, older_than_days=30, merged=False, now=WHEN)
    assert removed == [old, other_old]
    assert list_capsules(tmp_path) == [recent]


def test_prune_merged_deletes_capsules_a_merge_superseded(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    day = WHEN - timedelta(days=10)
    # feature/done: its capsule, then its work merged into main.
    _git(repo, "checkout", "-q", "-b", "feature/done")
    _commit(repo, "done.txt", day)
    done = save_capsule(repo, "# done\n", branch="feature/done", created=day + timedelta(hours=1))
    # feature/open: work not merged.
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-q", "-b", "feature/open")
    _commit(repo, "open.txt", day)
    unmerged = save_capsule(repo, "# open\n", branch="feature/open", created=day)
    _git(repo, "checkout", "-q", "main")
    _git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge done",
        "feature/done",
        when=day.replace(hour=23),
    )
    # feature/fresh: cut from main after the merge, no commit yet, capsule written since.
    _git(repo, "branch", "feature/fresh")
    fresh = save_capsule(repo, "# fresh\n", branch="feature/fresh", created=WHEN)
    on_main = save_capsule(repo, "# main\n", branch="main", created=day)
    gone = save_capsule(repo, "# gone\n", branch="deleted/branch", created=day)

    removed = prune_capsules(repo, older_than_days=None, merged=True, now=WHEN)

    assert removed == [done]
    assert set(list_capsules(repo)) == {unmerged, fresh, on_main, gone}


def test_prune_merged_outside_a_repository_deletes_nothing(tmp_path: Path) -> None:
    saved = save_capsule(tmp_path, "# x\n", branch="a", created=WHEN)
    assert prune_capsules(tmp_path, older_than_days=None, merged=True, now=WHEN) == []
    assert list_capsules(tmp_path) == [saved]
