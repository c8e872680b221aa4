"""``delegate open ID``: a session in its own CLI on this terminal (ids are data)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hostile_trees import claude_lines, jsonl
from support import run_cli

SID = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

RECORDER = """#!{python}
import json, os, sys
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd()}}, f)
sys.exit(5)
"""


def world(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A Claude Code transcript delegate has not imported, and a recording ``claude``."""
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, bin_dir):
        folder.mkdir()
    lines = claude_lines(SID, "fix the flaky login test")
    for line in lines:
        line["cwd"] = str(project)
    transcript = home / ".claude" / "projects" / "-project" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(jsonl(lines))
    record = tmp_path / "ran.json"
    claude = bin_dir / "claude"
    claude.write_text(RECORDER.format(python=sys.executable, record=str(record)))
    claude.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    return project, record, env


def test_open_imports_a_new_id_and_runs_its_cli_with_delegates_hooks(tmp_path: Path) -> None:
    project, record, env = world(tmp_path)
    data = str(tmp_path / "data")
    done = run_cli("--data-dir", data, "open", SID, home=tmp_path / "home", env=env)
    assert done.returncode == 5, done.stderr  # the CLI's own exit status
    ran = json.loads(record.read_text())
    assert ran["cwd"] == str(project)
    assert ran["argv"][:3] == ["--resume", SID, "--settings"]
    hooks = json.loads(ran["argv"][3])["hooks"]
    assert f"--data-dir {data} hook claude-code Stop" in hooks["Stop"][0]["hooks"][0]["command"]


def test_open_print_shows_the_command(tmp_path: Path) -> None:
    project, record, env = world(tmp_path)
    done = run_cli(
        "--data-dir", str(tmp_path / "data"), "open", SID[:8], "--print",
        home=tmp_path / "home", env=env,
    )  # fmt: skip
    assert done.returncode == 1  # a prefix names only a session delegate already knows
    assert "unknown_conversation" in done.stderr
    done = run_cli(
        "--data-dir", str(tmp_path / "data"), "open", SID, "--print",
        home=tmp_path / "home", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cd {project} && claude --resume {SID}"
    assert not record.exists()


def test_an_id_that_is_not_a_session_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    _, record, env = world(tmp_path)
    for bad in ("--settings=x", "-rf", "../../etc/passwd", "7d1e2f3a-4b5c-4d6e-8f70-112233445566"):
        done = run_cli(
            "--data-dir", str(tmp_path / "data"), "open", "--", bad,
            home=tmp_path / "home", env=env,
        )  # fmt: skip
        assert done.returncode == 1, (bad, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert "unknown_conversation" in done.stderr or "invalid" in done.stderr
    assert not record.exists()
