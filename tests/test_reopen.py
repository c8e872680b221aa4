"""Opening a Claude Code / Codex session in its own CLI: the plan (argv, cwd, command line).

The plan is checked against real files: a stand-in executable on a PATH of the
test's own, real folders (deleted to be missing). The stand-in is also run
through :func:`core.reopen.run_attached` to see the argv and cwd it really got.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.config import AgentConfig, Settings
from core.errors import CwdMissing, InvalidId, NotReopenable, RunnerUnavailable
from core.models import Session, SessionMode, SessionState
from core.reopen import opens_interactively, reopen_plan, run_attached

CLAUDE_ID = "0b7e4c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b"
CODEX_ID = "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"

# Records its argv and cwd as JSON next to itself, then exits with 3.
STAND_IN = """#!{python}
import json, os, sys
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd()}}, f)
sys.exit(3)
"""


def session(
    cid: str = CLAUDE_ID,
    *,
    source: str = "claude-code",
    agent_id: str = "claude-code",
    cwd: str = "/",
    parent_id: str | None = None,
) -> Session:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Session(
        conversation_id=cid,
        agent_id=agent_id,
        mode=SessionMode.STANDARD,
        state=SessionState.IDLE,
        cwd=cwd,
        source=source,
        parent_id=parent_id,
        created_at=at,
        last_interacted_at=at,
    )


def stand_in(folder: Path, name: str) -> Path:
    """An executable called ``name`` in ``folder`` that records how it was started."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text(STAND_IN.format(python=sys.executable, record=str(folder / f"{name}.json")))
    exe.chmod(0o755)
    return exe


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder first on PATH holding stand-in ``claude`` and ``codex``."""
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "claude")
    stand_in(bin_dir, "codex")
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    return bin_dir


def test_claude_code_session_resumes_by_id_alone(on_path: Path, tmp_path: Path) -> None:
    plan = reopen_plan(session(cwd=str(tmp_path)), Settings())
    assert plan.argv == (str(on_path / "claude"), "--resume", CLAUDE_ID)
    assert "--session-id" not in plan.argv
    assert plan.cwd == tmp_path
    assert plan.command_line == f"cd {tmp_path} && claude --resume {CLAUDE_ID}"


def test_codex_session_resumes_with_codex_resume(on_path: Path, tmp_path: Path) -> None:
    s = session(CODEX_ID, source="codex", agent_id="codex", cwd=str(tmp_path))
    plan = reopen_plan(s, Settings())
    assert plan.argv == (str(on_path / "codex"), "resume", CODEX_ID)
    assert plan.command_line == f"cd {tmp_path} && codex resume {CODEX_ID}"


def test_command_line_quotes_a_hostile_folder_name(on_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "it's $(rm -rf ~) a; folder"
    folder.mkdir()
    line = reopen_plan(session(cwd=str(folder)), Settings()).command_line
    words = shlex.split(line)
    assert words == ["cd", str(folder), "&&", "claude", "--resume", CLAUDE_ID]


@pytest.mark.parametrize("bad", ["--help", "-x", "--resume=x", "abc def", "../x", ""])
def test_an_id_that_could_read_as_an_option_is_refused(
    on_path: Path, tmp_path: Path, bad: str
) -> None:
    with pytest.raises(InvalidId):
        reopen_plan(session(bad, cwd=str(tmp_path)), Settings())
    with pytest.raises(InvalidId):
        reopen_plan(session(bad, source="codex", agent_id="codex", cwd=str(tmp_path)), Settings())


def test_a_claude_sub_agent_is_opened_through_its_parent(on_path: Path, tmp_path: Path) -> None:
    sub = session("a1b2c3d4e5f60718", cwd=str(tmp_path), parent_id=CLAUDE_ID)
    assert not opens_interactively(sub, Settings())
    with pytest.raises(NotReopenable, match="parent"):
        reopen_plan(sub, Settings())


def test_a_claude_sub_agent_delegate_launched_opens_as_itself(
    on_path: Path, tmp_path: Path
) -> None:
    # Launched by delegate with a parent: its own Claude session, its own transcript.
    child_id = "7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    sub = session(child_id, source="delegate", cwd=str(tmp_path), parent_id=CLAUDE_ID)
    assert opens_interactively(sub, Settings())
    assert reopen_plan(sub, Settings()).argv[1:] == ("--resume", child_id)


def test_a_missing_cwd_is_refused_and_another_folder_can_be_chosen(
    on_path: Path, tmp_path: Path
) -> None:
    gone = tmp_path / "deleted-worktree"
    with pytest.raises(CwdMissing) as refused:
        reopen_plan(session(cwd=str(gone)), Settings())
    assert str(gone) in refused.value.message
    other = tmp_path / "elsewhere"
    other.mkdir()
    plan = reopen_plan(session(cwd=str(gone)), Settings(), cwd=str(other))
    assert plan.cwd == other


def test_a_cwd_that_is_a_file_is_refused(on_path: Path, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(CwdMissing):
        reopen_plan(session(cwd=str(not_a_folder)), Settings())


def test_no_cli_on_path_is_runner_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RunnerUnavailable, match="claude"):
        reopen_plan(session(cwd=str(tmp_path)), Settings())


def test_configured_binary_and_env_are_used(tmp_path: Path) -> None:
    exe = stand_in(tmp_path / "elsewhere", "my-claude")
    settings = Settings(
        agents={
            "claude-code": AgentConfig(
                runner="claude_code", binary=str(exe), env={"CLAUDE_CONFIG_DIR": "/cc"}
            )
        }
    )
    plan = reopen_plan(session(cwd=str(tmp_path)), settings)
    assert plan.argv[0] == str(exe)
    assert plan.env["CLAUDE_CONFIG_DIR"] == "/cc"
    assert plan.command_line.endswith(f"{shlex.quote(str(exe))} --resume {CLAUDE_ID}")


def test_delegate_launched_claude_session_opens_in_claude(on_path: Path, tmp_path: Path) -> None:
    settings = Settings(agents={"cc": AgentConfig(runner="claude_code")})
    s = session(source="delegate", agent_id="cc", cwd=str(tmp_path))
    assert opens_interactively(s, settings)
    assert reopen_plan(s, settings).argv[1:] == ("--resume", CLAUDE_ID)


def test_delegate_own_sessions_do_not_open_a_cli(on_path: Path, tmp_path: Path) -> None:
    s = session(source="delegate", agent_id="echo", cwd=str(tmp_path))
    assert not opens_interactively(s, Settings())
    with pytest.raises(NotReopenable, match="conversation"):
        reopen_plan(s, Settings())


def test_run_attached_runs_the_cli_in_the_cwd(on_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    plan = reopen_plan(session(cwd=str(folder)), Settings())
    code = asyncio.run(run_attached(plan))
    assert code == 3
    record = json.loads((on_path / "claude.json").read_text())
    assert record == {"argv": ["--resume", CLAUDE_ID], "cwd": str(folder)}


def test_the_command_line_needs_no_cli_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    plan = reopen_plan(session(cwd=str(tmp_path)), Settings(), find_binary=False)
    assert plan.command_line == f"cd {tmp_path} && claude --resume {CLAUDE_ID}"
