"""Every git delegate runs ignores the commands a repository's configuration names.

A real repository per planted setting (fsmonitor, hooks, pagers, an external diff,
textconv, clean/smudge and process filters, an include of such a file, a signature
program); every entry of delegate's that runs git is exercised on it and no marker may
appear. A repository another user owns is refused, as git's ``safe.directory`` says.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hostile_git import SETTINGS, git, hostile_repo, ran

from core.capsules.drift import check_drift, reference_for
from core.capsules.merged import superseded_capsules
from core.capsules.model import Reference
from core.documents.handoff_facts import checked_work_tree, git_facts
from core.safe_git import git_output, run_git
from tui.capsules.files import changed_files, repository_files


def every_git_entry(repo: Path) -> None:
    """Each of delegate's entries that runs git, on ``repo``."""
    facts = git_facts(repo)
    assert facts is not None
    assert facts.root == repo.resolve()
    assert any("src/app.py" in line for line in facts.status)
    assert facts.diff_stat, "git diff --stat HEAD answered"
    assert checked_work_tree(repo / "src") == repo
    assert reference_for(repo, "src/app.py").blob is not None
    drift = check_drift(repo, [Reference(path="src/app.py", blob="0" * 40)])
    assert drift[0].head is not None
    capsule = repo / ".delegate" / "capsules" / "feature" / "capsule-2000-01-01-000000.md"
    superseded_capsules(repo, [capsule])
    assert "src/app.py" in changed_files(repo)
    assert "notes.txt" in repository_files(repo)


@pytest.mark.parametrize("kind", SETTINGS)
def test_no_planted_command_runs(tmp_path: Path, kind: str) -> None:
    markers = tmp_path / "markers"
    repo = hostile_repo(tmp_path / "repo", markers, (kind,))
    every_git_entry(repo)
    assert ran(markers) == []


def test_all_planted_at_once_and_the_callers_git_environment_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markers = tmp_path / "markers"
    repo = hostile_repo(tmp_path / "repo", markers)
    # A caller's environment naming another repository, an external diff or a pager
    # (a git hook running delegate has GIT_DIR set) changes nothing.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "nothing"))
    monkeypatch.setenv("GIT_PAGER", "false")
    every_git_entry(repo)
    assert ran(markers) == []


def test_planted_settings_do_run_under_plain_git(tmp_path: Path) -> None:
    """The planted repositories are hostile indeed: plain git runs their commands."""
    markers = tmp_path / "markers"
    repo = hostile_repo(tmp_path / "repo", markers)
    for args in (("status",), ("diff", "HEAD")):
        subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
    assert {"include", "filter_process"} <= set(ran(markers))


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_repository_another_user_owns_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "theirs"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("x\n", encoding="utf-8")
    for folder, _dirs, files in os.walk(repo):
        os.chown(folder, 12345, 12345)
        for name in files:
            os.chown(Path(folder) / name, 12345, 12345)
    done = run_git(repo, "status", "--porcelain=v1")
    assert done is not None
    assert not done.ok  # git's safe.directory refuses it
    assert git_output(repo, "rev-parse", "--show-toplevel") is None
    assert git_facts(repo) is None
    assert changed_files(repo) == []
