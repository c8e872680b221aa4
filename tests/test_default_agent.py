"""A launch that names no agent talks to a real one installed here: Claude Code, else Codex;
``delegate agents`` says which and why; with neither, the launch says what to install."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from support import run_cli

from core.config import Settings, load_settings
from core.errors import NoAgentInstalled
from core.runners.default_agent import default_agent

pytestmark = pytest.mark.real_default_agent

STAND_IN = f"#!{sys.executable}\nprint('stand-in')\n"


def path_with(tmp_path: Path, *clis: str) -> str:
    """A PATH holding stand-ins for ``clis`` and the Python running the tests, nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for cli in clis:
        (bin_dir / cli).write_text(STAND_IN)
        (bin_dir / cli).chmod(0o755)
    return os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)])


@pytest.mark.parametrize(
    ("installed", "expected"),
    [(("claude", "codex"), "claude-code"), (("claude",), "claude-code"), (("codex",), "codex")],
)
def test_the_default_is_the_first_installed_of_claude_code_and_codex(
    tmp_path: Path, installed: tuple[str, ...], expected: str
) -> None:
    chosen = default_agent(Settings(), {"PATH": path_with(tmp_path, *installed)})
    assert (chosen.agent_id, chosen.source) == (expected, "installed")


def test_with_no_agent_cli_installed_a_launch_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(NoAgentInstalled) as caught:
        default_agent(Settings(), {"PATH": path_with(tmp_path)})
    assert caught.value.code == "runner_unavailable"
    assert "Claude Code" in caught.value.message
    assert "--agent" in caught.value.message


def test_the_config_then_the_environment_override_what_is_installed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text('default_agent = "reviewer"\n')
    settings = load_settings(data)
    path = path_with(tmp_path, "claude")
    assert default_agent(settings, {"PATH": path}).agent_id == "reviewer"
    from_env = default_agent(settings, {"PATH": path, "DELEGATE_AGENT": "codex"})
    assert (from_env.agent_id, from_env.source) == ("codex", "env")


def test_a_configured_binary_counts_as_installed(tmp_path: Path) -> None:
    binary = tmp_path / "elsewhere" / "my-claude"
    binary.parent.mkdir()
    binary.write_text(STAND_IN)
    binary.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[agents.claude-code]\nbinary = "{binary}"\n')
    chosen = default_agent(load_settings(data), {"PATH": path_with(tmp_path, "codex")})
    assert chosen.agent_id == "claude-code"


def test_delegate_agents_says_which_is_the_default_and_why(tmp_path: Path) -> None:
    env = {"PATH": path_with(tmp_path, "codex")}
    listing = run_cli("agents", "--json", home=tmp_path, env=env)
    assert listing.returncode == 0, listing.stderr
    agents = json.loads(listing.stdout)
    defaults = [name for name, a in agents.items() if a["default"]]
    assert defaults == ["codex"]
    assert "installed" in agents["codex"]["default_because"]
    assert agents["claude-code"]["installed"] is False
    assert agents["echo"]["default"] is False

    plain = run_cli("agents", home=tmp_path, env=env)
    assert plain.returncode == 0, plain.stderr
    assert "default: codex (the first of claude-code, codex installed here)" in plain.stdout
    claude_line = next(line for line in plain.stdout.splitlines() if "claude-code " in line)
    assert "not installed" in claude_line


def test_a_run_with_no_agent_installed_fails_clearly_and_stores_nothing(tmp_path: Path) -> None:
    env = {"PATH": path_with(tmp_path)}
    run = run_cli("run", "summarise the auth module", home=tmp_path, env=env)
    assert run.returncode != 0
    assert "runner_unavailable" in run.stderr
    assert "install Claude Code" in run.stderr
    assert "Traceback" not in run.stderr
    listed = run_cli("sessions", "list", "--json", home=tmp_path, env=env)
    assert json.loads(listed.stdout)["sessions"] == []
    plain = run_cli("agents", home=tmp_path, env=env)
    assert "default: none" in plain.stdout


def test_a_run_with_claude_installed_runs_claude(tmp_path: Path) -> None:
    """The stand-in ``claude`` records its argv: the launch reached it, not ``echo``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "argv.json"
    (bin_dir / "claude").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv))\nsys.exit(3)\n"
    )
    (bin_dir / "claude").chmod(0o755)
    env = {"PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)])}
    run_cli("run", "summarise the auth module", home=tmp_path, env=env)
    argv = json.loads(record.read_text())
    assert "summarise the auth module" in argv
