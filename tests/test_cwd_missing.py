"""A run whose working folder does not exist is refused before anything is written."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from support import query, row_counts, run_cli, snapshot, write_config

# A stand-in ``claude -p`` that answers at once (it writes no transcript).
FAKE_CLAUDE = """#!{python}
import json
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
"""


def launched_session(tmp_path: Path) -> tuple[Path, str, Path]:
    """A data folder holding one finished Claude Code session launched in a worktree."""
    fake = tmp_path / "fake-claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable))
    fake.chmod(0o755)
    data = write_config(
        tmp_path / "data", f'\n[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
    )
    worktree = tmp_path / "worktrees" / "feature"
    worktree.mkdir(parents=True)
    result = run_cli(
        "--data-dir",
        str(data),
        "run",
        "--agent",
        "cc",
        "--cwd",
        str(worktree),
        "start it",
        home=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    [(cid,)] = query(data, "SELECT conversation_id FROM sessions")
    return data, cid, worktree


def test_follow_up_in_a_deleted_worktree_is_cwd_missing_and_writes_nothing(
    tmp_path: Path,
) -> None:
    data, cid, worktree = launched_session(tmp_path)
    shutil.rmtree(worktree)
    before = snapshot(data)
    result = run_cli("--data-dir", str(data), "run", "--session", cid, "go on", home=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "cwd_missing" in result.stderr
    assert str(worktree) in result.stderr
    # No turn counted, no run, and the session did not move to "just now".
    assert snapshot(data) == before


def test_follow_up_tool_in_a_deleted_worktree_is_a_typed_error(tmp_path: Path) -> None:
    data, cid, worktree = launched_session(tmp_path)
    shutil.rmtree(worktree)
    before = row_counts(data)
    request = json.dumps({"conversation_id": cid, "prompt": "go on"})
    result = run_cli("--data-dir", str(data), "tool", "delegate_agent", request, home=tmp_path)
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "cwd_missing"
    assert str(worktree) in error["message"]
    assert row_counts(data) == before


@pytest.mark.parametrize(
    "cwd",
    [
        "~nosuchuser",
        "~nosuchuser/src",
        "no/such/folder",
        "n" * 300,  # a name longer than the file system allows (ENAMETOOLONG)
        "deep/" * 1000,  # a path longer than PATH_MAX
    ],
    ids=["unknown-user", "unknown-user-sub", "relative", "name-too-long", "path-too-long"],
)
def test_launch_with_a_cwd_that_does_not_exist_is_cwd_missing(tmp_path: Path, cwd: str) -> None:
    data = write_config(tmp_path / "data")
    request = json.dumps({"prompt": "hi", "cwd": cwd})
    result = run_cli("--data-dir", str(data), "tool", "delegate_agent", request, home=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "cwd_missing"
    assert cwd in error["message"]
    assert row_counts(data)["sessions"] == 0
