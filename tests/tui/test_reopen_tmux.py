"""``enter`` hands the real terminal to the agent CLI and the panel comes back (in tmux).

``App.run_test`` has no terminal to suspend, so this is the one honest test of
``App.suspend``: the real panel runs in a tmux pane of a tmux server of its own,
a stand-in ``claude`` first on PATH records its argv, cwd and whether it got the
terminal, shows a line while it owns the pane, appends a reply to the session's
transcript and exits when told. Skipped where tmux is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REPO = Path(__file__).resolve().parents[2]
SESSION_ID = "7a11e0a0-1111-4222-8333-944445555666"
WHILE_RUNNING = "STAND-IN CLAUDE OWNS THE TERMINAL"
REPLY = "back from the real session"

STAND_IN = """#!{python}
import json, os, sys, time
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd(), "tty": os.isatty(0)}}, f)
print({banner!r}, flush=True)
deadline = time.monotonic() + 20
while not os.path.exists({go!r}) and time.monotonic() < deadline:
    time.sleep(0.05)
line = {{"type": "assistant", "sessionId": {sid!r}, "cwd": os.getcwd(), "uuid": "a2",
        "timestamp": "2026-11-22T10:00:00.000Z",
        "message": {{"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{{"type": "text", "text": {reply!r}}}],
                    "usage": {{"input_tokens": 40000, "output_tokens": 10}}}}}}
with open({transcript!r}, "a") as f:
    f.write(json.dumps(line) + "\\n")
"""


def write_transcript(home: Path, cwd: Path) -> Path:
    project = home / ".claude" / "projects" / str(cwd).replace("/", "-")
    project.mkdir(parents=True)
    first = {
        "type": "user",
        "sessionId": SESSION_ID,
        "cwd": str(cwd),
        "uuid": "u1",
        "timestamp": "2026-11-21T20:00:00.000Z",
        "message": {"role": "user", "content": "fix the flaky login test"},
    }
    path = project / f"{SESSION_ID}.jsonl"
    path.write_text(json.dumps(first) + "\n")
    return path


class Pane:
    """One tmux server (its own socket) running one command in a 120x36 pane."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "panel")

    def wait_for(self, condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}; the pane shows:\n{self.text()}"
                )
            time.sleep(0.1)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    server = Pane(f"delegate-test-{os.getpid()}-{tmp_path.name}")
    yield server
    server.tmux("kill-server")


@dataclass
class World:
    """The panel in its pane over one imported Claude Code session, a stand-in ``claude``."""

    pane: Pane
    project: Path
    record: Path  # what the stand-in recorded (argv, cwd, whether it had the terminal)
    go: Path  # touched when the person leaves the agent


@pytest.fixture
def world(tmp_path: Path, pane: Pane) -> World:
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, bin_dir):
        folder.mkdir()
    transcript = write_transcript(home, project)
    record, go = tmp_path / "claude-ran.json", tmp_path / "go"
    claude = bin_dir / "claude"
    claude.write_text(
        STAND_IN.format(
            python=sys.executable,
            record=str(record),
            banner=WHILE_RUNNING,
            go=str(go),
            sid=SESSION_ID,
            reply=REPLY,
            transcript=str(transcript),
        )
    )
    claude.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "CLAUDE_CONFIG_DIR")}
    env |= {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bin_dir), env.get("PATH", os.defpath)]),
        "CODEX_HOME": str(home / ".codex"),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
    }
    panel = [sys.executable, "-m", "tui.cli", "--data-dir", str(tmp_path / "data")]
    window = ["-s", "panel", "-x", "120", "-y", "36", "-c", str(tmp_path)]
    subprocess.run(
        ["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", *window, *panel],
        env=env,
        check=True,
        timeout=10,
    )
    pane.wait_for(lambda: "fix the flaky login test" in pane.text(), "the imported session")
    return World(pane, project, record, go)


def test_enter_hands_the_terminal_to_claude_and_the_panel_comes_back(world: World) -> None:
    pane = world.pane
    pane.tmux("send-keys", "-t", "panel", "Enter")

    pane.wait_for(world.record.exists, "the stand-in claude to start")
    pane.wait_for(lambda: WHILE_RUNNING in pane.text(), "the stand-in on the terminal")
    ran = json.loads(world.record.read_text())
    assert ran["argv"][:3] == ["--resume", SESSION_ID, "--settings"]
    assert (ran["cwd"], ran["tty"]) == (str(world.project), True)
    # delegate's hooks ride along (none installed here): the session can hand off.
    hooks = json.loads(ran["argv"][3])["hooks"]
    assert sorted(hooks) == ["SessionStart", "Stop", "UserPromptSubmit"]
    world.go.touch()  # the person leaves the agent
    pane.wait_for(lambda: REPLY in pane.text(), "the panel back, with the reply re-imported")
    assert WHILE_RUNNING not in pane.text()


def test_ctrl_c_at_the_agent_ends_the_agent_not_the_panel(world: World) -> None:
    pane = world.pane
    pane.tmux("send-keys", "-t", "panel", "Enter")
    pane.wait_for(lambda: WHILE_RUNNING in pane.text(), "the stand-in on the terminal")

    pane.tmux("send-keys", "-t", "panel", "C-c")

    # The stand-in dies of it (status 130 from Python's KeyboardInterrupt, or -2);
    # the panel comes back and says how the agent ended.
    pane.wait_for(lambda: "exited with status" in pane.text(), "the panel back, with a notice")
    assert "fix the flaky login test" in pane.text()


SECRET = "sk-ant-api03-" + "Z" * 40
FAILING = """#!{python}
import sys
session = sys.argv[sys.argv.index("--resume") + 1]
print("No conversation found with session ID: " + session, flush=True)
sys.stderr.write("hint: ANTHROPIC_API_KEY={secret} was rejected\\n")
sys.exit(1)
"""


def test_a_cli_that_fails_leaves_its_own_words_on_the_panel(world: World, tmp_path: Path) -> None:
    """The CLI prints its error and exits 1: back in the panel, its words stay on screen
    (redacted) until closed, not a passing "exited with status 1"."""
    claude = tmp_path / "bin" / "claude"
    claude.write_text(FAILING.format(python=sys.executable, secret=SECRET))
    pane = world.pane
    pane.tmux("send-keys", "-t", "panel", "Enter")

    said = f"No conversation found with session ID: {SESSION_ID}"
    pane.wait_for(lambda: "claude exited with status 1" in pane.text(), "the panel, saying so")
    shown = pane.text()
    assert said in shown
    assert "ANTHROPIC_API_KEY=[REDACTED] was rejected" in shown
    assert SECRET not in shown
    time.sleep(5)  # a notification would have gone by now; the CLI's words stay
    assert said in pane.text()
    pane.tmux("send-keys", "-t", "panel", "Escape")
    pane.wait_for(lambda: said not in pane.text(), "the words closed")
    assert "fix the flaky login test" in pane.text()
