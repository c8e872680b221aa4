"""A hand-off written through the hooks carries what delegate knows beside the agent's
words: git's modified files (seed 003: "Files modified: git status") for a checked git
work tree only, with git run so that a repository cannot run anything of its own."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from test_hook_handler import World, answer, stored

from core.documents.handoff_facts import git_facts
from core.documents.handoff_template import HANDOFF_SECTIONS, parse_handoff

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def agents_handoff() -> str:
    """A valid hand-off as an agent writes it; its Files Modified names one file only."""
    bodies = {name: f"- {name}, as the agent knows it" for name in HANDOFF_SECTIONS}
    bodies["Progress Summary"] = "### Completed\n- a\n\n### In Progress\n- b\n\n### Pending\n- c"
    bodies["Files Modified"] = "- pong.py (updated)"
    sections = "\n\n".join(f"## {name}\n\n{body}" for name, body in bodies.items())
    return f"# Context Handoff\n\n{sections}\n"


def commit_and_change(repo: Path) -> None:
    (repo / "pong.py").write_text("PONG = 1\n")
    (repo / "ping.py").write_text("PING = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "pong.py").write_text("PONG = 2\n")
    (repo / "ping.py").write_text("PING = 2\n")
    (repo / "serve.py").write_text("print('new')\n")


async def hand_off_through_the_hooks(world: World) -> dict[str, str]:
    world.turn(input_tokens=150_000)  # 75 %
    assert answer(await asyncio.to_thread(world.stop))["decision"] == "block"
    said = answer(await asyncio.to_thread(world.stop, active=True, reply=agents_handoff()))
    assert "hand-off written" in said["systemMessage"], said
    _, [doc], _ = await stored(world)
    assert doc.producer == "agent"
    return parse_handoff(Path(doc.path).read_text(encoding="utf-8"))


async def test_the_agents_handoff_gets_gits_modified_files(world: World) -> None:
    commit_and_change(world.repo)
    files = (await hand_off_through_the_hooks(world))["Files Modified"]
    assert "- pong.py (updated)" in files  # the agent's own list stays
    assert " M ping.py" in files  # the file the agent forgot, from git
    assert " M pong.py" in files
    assert "?? serve.py" in files


async def test_a_repository_of_the_transcript_runs_nothing_of_its_own(world: World) -> None:
    commit_and_change(world.repo)
    marker = world.home / "ran"
    git(world.repo, "config", "core.fsmonitor", f"touch {marker}; false")
    git(world.repo, "config", "core.pager", f"touch {marker}; cat")
    files = (await hand_off_through_the_hooks(world))["Files Modified"]
    assert " M ping.py" in files
    assert not marker.exists()


async def test_a_folder_that_is_no_git_work_tree_gets_no_git_section(world: World) -> None:
    shutil.rmtree(world.repo / ".git")
    (world.repo / ".git").write_text("gitdir: /nowhere/at/all\n")  # not a checked work tree
    files = (await hand_off_through_the_hooks(world))["Files Modified"]
    assert files == "- pong.py (updated)"


def test_git_facts_ignore_the_callers_git_variables_and_the_repositorys_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_and_change(repo)
    marker = tmp_path / "ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))  # would point git elsewhere

    (repo / "sub").mkdir()
    found = git_facts(repo / "sub")  # a folder inside the work tree

    assert found is not None
    assert found.root == repo
    assert found.branch == "main"
    assert " M ping.py" in found.status
    assert any("pong.py" in line for line in found.diff_stat)
    assert not marker.exists()


async def test_a_folder_that_is_no_git_work_tree_gets_its_handoff_under_the_data_folder(
    world: World,
) -> None:
    """The hooks' hand-off goes where the supervisor's would: a folder that is not a
    repository of the person's is never written in (core.documents.write_folder)."""
    shutil.rmtree(world.repo / ".git")
    await hand_off_through_the_hooks(world)
    _, [doc], _ = await stored(world)
    assert Path(doc.path).is_relative_to(world.data / "elsewhere")
    assert not (world.repo / ".delegate").exists()
