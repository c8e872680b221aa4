"""``delegate hooks install|uninstall|status``: delegate's hooks go into Claude Code's
settings (and Codex's notify) beside the person's own, and come out leaving exactly
what was there."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tui.cli import main

USERS_SETTINGS = """{
    "model": "opus",
    "hooks": {
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ],
        "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "l" } ] } ]
    },
    "permissions": {"allow": ["Bash(ls:*)"]}
}
"""


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["--data-dir", str(tmp_path / "data"), *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_install_keeps_the_users_hooks_and_uninstall_restores_the_bytes(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_dir.mkdir()
    settings = claude_dir / "settings.json"
    settings.write_text(USERS_SETTINGS)

    code, status = cli(tmp_path, capsys, "hooks", "install", "claude-code")
    assert code == 0
    assert status["installed"]
    assert status["changed"]
    assert status["settings"] == str(settings)
    installed = json.loads(settings.read_text())
    assert installed["model"] == "opus"
    assert installed["permissions"] == {"allow": ["Bash(ls:*)"]}
    stop = installed["hooks"]["Stop"]
    assert stop[0] == {"hooks": [{"type": "command", "command": "notify-send done"}]}  # theirs
    ours = stop[1]["hooks"][0]["command"]
    assert shlex.split(ours)[-3:] == ["hook", "claude-code", "Stop"]
    assert str(tmp_path / "data") in ours  # the data folder it was installed from
    assert installed["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    start = installed["hooks"]["SessionStart"]
    assert shlex.split(start[0]["hooks"][0]["command"])[-1] == "SessionStart"

    # Again: still one group of ours per event.
    code, status = cli(tmp_path, capsys, "hooks", "install", "claude-code")
    assert code == 0
    assert status["installed"]
    assert not status["changed"]
    assert len(json.loads(settings.read_text())["hooks"]["Stop"]) == 2

    code, status = cli(tmp_path, capsys, "hooks", "status", "claude-code")
    assert status["events"] == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert status["missing"] == []

    code, status = cli(tmp_path, capsys, "hooks", "uninstall", "claude-code")
    assert code == 0
    assert status["changed"]
    assert not status["installed"]
    assert settings.read_text() == USERS_SETTINGS  # byte for byte, their layout too

    code, status = cli(tmp_path, capsys, "hooks", "uninstall", "claude-code")
    assert code == 0
    assert not status["changed"]
    assert settings.read_text() == USERS_SETTINGS


def test_a_file_delegate_created_is_removed_again(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = claude_dir / "settings.json"
    code, status = cli(tmp_path, capsys, "hooks", "install", "claude-code")
    assert code == 0
    assert status["installed"]
    assert set(json.loads(settings.read_text())["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
    }
    code, status = cli(tmp_path, capsys, "hooks", "uninstall", "claude-code")
    assert code == 0
    assert not settings.exists()


def test_edits_made_after_install_survive_uninstall(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_dir.mkdir()
    settings = claude_dir / "settings.json"
    settings.write_text(USERS_SETTINGS)
    cli(tmp_path, capsys, "hooks", "install", "claude-code")
    edited = json.loads(settings.read_text())
    edited["theme"] = "dark"
    edited["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine-later"}]})
    settings.write_text(json.dumps(edited))

    code, status = cli(tmp_path, capsys, "hooks", "uninstall", "claude-code")
    assert code == 0
    assert status["changed"]
    after = json.loads(settings.read_text())
    assert after["theme"] == "dark"
    assert [g["hooks"][0]["command"] for g in after["hooks"]["Stop"]] == [
        "notify-send done",
        "mine-later",
    ]
    assert "SessionStart" not in after["hooks"]


def test_a_broken_settings_file_is_refused_and_left_alone(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_dir.mkdir()
    settings = claude_dir / "settings.json"
    settings.write_text('{"hooks": [')
    code, payload = cli(tmp_path, capsys, "hooks", "install", "claude-code")
    assert code == 1
    assert payload["error"]["code"] == "hook_settings_unusable"
    assert "not valid JSON" in payload["error"]["message"]
    assert str(settings) in payload["error"]["message"]
    assert settings.read_text() == '{"hooks": ['


def test_a_fifo_in_place_of_the_settings_is_never_opened_for_reading(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_dir.mkdir()
    os.mkfifo(claude_dir / "settings.json")
    code, payload = cli(tmp_path, capsys, "hooks", "status", "claude-code")
    assert code == 1  # answered at once: a FIFO would block a plain open
    assert payload["error"]["code"] == "hook_settings_unusable"
    assert "not a regular file" in payload["error"]["message"]


def test_a_linked_settings_file_stays_a_link(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "claude.json").write_text(USERS_SETTINGS)
    claude_dir.mkdir()
    (claude_dir / "settings.json").symlink_to(dotfiles / "claude.json")
    code, status = cli(tmp_path, capsys, "hooks", "install", "claude-code")
    assert code == 0
    assert status["installed"]
    assert (claude_dir / "settings.json").is_symlink()
    assert "Stop" in json.loads((dotfiles / "claude.json").read_text())["hooks"]
    cli(tmp_path, capsys, "hooks", "uninstall", "claude-code")
    assert (dotfiles / "claude.json").read_text() == USERS_SETTINGS


def test_the_installed_command_runs_this_delegate(
    tmp_path: Path, claude_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command in settings.json runs, from any folder, and answers a hook."""
    cli(tmp_path, capsys, "hooks", "install", "claude-code")
    settings = json.loads((claude_dir / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    project = tmp_path / "project"
    (project / "tui").mkdir(parents=True)  # a project's own `tui` package never stands in
    (project / "tui" / "__init__.py").write_text("raise SystemExit(42)\n")
    payload = {
        "session_id": "961c19ae-5fe4-406e-b033-a16b0c4d7e1c",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # no hand-off waiting: nothing to add


CODEX_CONFIG = """# my codex config
model = "o4"

[model_providers.local]
name = "local"
"""


def test_codex_notify_is_installed_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    codex = tmp_path / "codex"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    config = codex / "config.toml"
    config.write_text(CODEX_CONFIG)
    code, status = cli(tmp_path, capsys, "hooks", "install", "codex")
    assert code == 0
    assert status["installed"]
    assert status["events"] == ["notify"]
    import tomllib

    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o4"
    assert parsed["model_providers"]["local"]["name"] == "local"
    assert parsed["notify"][:3] == ["env", "DELEGATE_HOOK=1", sys.executable]
    assert parsed["notify"][-3:] == ["hook", "codex", "notify"]
    code, status = cli(tmp_path, capsys, "hooks", "uninstall", "codex")
    assert code == 0
    assert config.read_text() == CODEX_CONFIG


def test_codex_notify_of_the_users_own_is_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    codex = tmp_path / "codex"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    config = codex / "config.toml"
    config.write_text('notify = ["my-notifier"]\n' + CODEX_CONFIG)
    code, payload = cli(tmp_path, capsys, "hooks", "install", "codex")
    assert code == 1
    assert payload["error"]["code"] == "hook_settings_unusable"
    assert "my-notifier" in payload["error"]["message"]
    assert config.read_text() == 'notify = ["my-notifier"]\n' + CODEX_CONFIG
