"""The README's commands, run as written, in order, with the default agent a new user gets.

Every ``uv run delegate ...`` line of the README's shell blocks runs here (``uv run``
is the project's own launcher: the test runs the same ``delegate`` from this
environment), in a fresh data folder, inside a git repository, with the pinned
real Claude Code and Codex on PATH against the loopback model server and no
``$DELEGATE_AGENT``: the default is Claude Code, as on a new user's machine. A
placeholder (``<id>``, ``<run>``, ``<artifacts-session>``) is filled with an id an
earlier command printed. A role's model answers as a model would: it writes its
hand-off file with Claude Code's own Write tool, then returns the compact JSON.

A line that cannot run here says why in ``NOT_RUN`` (the app itself, installs);
a README line neither run nor listed there fails the test, so a new command
cannot be added to the README untested.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agent_clis import Agents, find_cli
from model_server import ToolCall

README = Path(__file__).resolve().parents[2] / "README.md"
BIN = Path(sys.executable).parent
COMMAND_TIMEOUT_S = 120

pytestmark = [pytest.mark.e2e, pytest.mark.real_default_agent]

# Lines that are not run, by their command's start, and why.
NOT_RUN = {
    "uv run delegate open": "hands the terminal to the CLI (tests/e2e/test_continue_real.py)",
    "uv run delegate": "the app itself (the panel's tmux tests start it)",
    "uv run pytest": "the test suite itself",
    "uv run ruff": "a developer's lint",
    "uv run mypy": "a developer's type check",
    "uv run lint-imports": "a developer's layer check",
    "uv run python": "a full-size benchmark script",
    "uv tool install": "installs delegate for daily use (a machine-wide change)",
    "uv tool": "uv's own tool management",
    "delegate": "the installed app itself",
    "bash .ci/run": "CI itself",
}

# Roles of the README's chain, last first: a role's prompt names the prior role's
# hand-off file too, so its own is looked for before the earlier ones.
ROLE_RETURNS = {
    "project_manager": "BAZINGA",
    "tech_lead": "APPROVED",
    "qa_expert": "PASS",
    "developer": "READY_FOR_QA",
}


def readme_commands() -> list[str]:
    """Every command line of the README's ``bash`` blocks, comments stripped."""
    lines, in_bash = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_bash = line.strip() == "```bash"
            continue
        if in_bash and line.strip() and not line.lstrip().startswith("#"):
            lines.append(strip_comment(line).strip())
    return lines


def strip_comment(line: str) -> str:
    """The line without its trailing ``# ...`` comment (no README command has " # " inside)."""
    return re.split(r"\s+#\s", line, maxsplit=1)[0]


def skipped_because(command: str) -> str | None:
    if command in NOT_RUN:
        return NOT_RUN[command]
    for start, why in NOT_RUN.items():
        if start.startswith("uv run delegate ") and command.startswith(start + " "):
            return why
    if command.startswith("uv run delegate ") or " | uv run delegate " in command:
        return None
    if command.startswith(("claude mcp add", "codex mcp add")):
        return None
    for start, why in NOT_RUN.items():
        if command == start or command.startswith(start + " "):
            return why
    return "not a delegate command"


# `uv run X` is the project's launcher: here X runs from this environment.
UV_RUN = 'uv() { if [ "$1" = run ]; then shift; fi; "$@"; }\n'


class World:
    """Runs commands as a person would in one shell: same folder, same data, same PATH."""

    def __init__(self, agents: Agents, data: Path) -> None:
        self.agents = agents
        self.repo = agents.workdir
        self.env = {
            **os.environ,
            "DELEGATE_HOME": str(data),
            "PATH": os.pathsep.join([str(BIN), os.environ["PATH"]]),
        }
        self.ids: dict[str, str] = {}

    def fill(self, command: str) -> str:
        for placeholder, value in self.ids.items():
            command = command.replace(placeholder, value)
        left = re.findall(r"<[a-z-]+>", command)
        assert not left, f"no id known for {left} in {command!r}"
        return command

    def run(
        self, command: str, *, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", UV_RUN + command],
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def learn(self, output: str) -> None:
        """Ids an output names become the placeholders' values."""
        if found := re.search(r"^([0-9a-f-]{36})\t", output, re.MULTILINE):
            self.ids["<id>"] = found.group(1)  # the first row of a listing
        if found := re.search(r"in conversation ([0-9a-f-]{36})", output):
            self.ids["<id>"] = found.group(1)
        if found := re.search(r"artifacts session (\S+)", output):
            self.ids["<artifacts-session>"] = found.group(1)


def role_writes_its_handoff(agents: Agents) -> None:
    """Each role's model writes its hand-off file with the Write tool, then returns."""
    for role, status in ROLE_RETURNS.items():
        done = json.dumps({"status": status, "summary": ["Did it", "Changed a file", "All good"]})

        def write(last: str, role: str = role, status: str = status) -> ToolCall:
            found = re.search(rf"(\.delegate/artifacts/[^`\\\s]+/handoff_{role}\.json)", last)
            assert found, f"the {role}'s prompt names no hand-off file"
            handoff = {"from_agent": role, "status": status, "summary": "did it"}
            return ToolCall(
                "Write",
                {"file_path": str(agents.workdir / found.group(1)), "content": json.dumps(handoff)},
            )

        agents.server.tool_when(f"handoff_{role}.json", write, done)


def test_every_readme_command_runs_as_written(agents: Agents, tmp_path: Path) -> None:
    find_cli("claude")
    find_cli("codex")
    subprocess.run(["git", "init", "-q", str(agents.workdir)], check=True)
    role_writes_its_handoff(agents)
    world = World(agents, tmp_path / "delegate-data")
    commands = readme_commands()
    assert len(commands) > 20, "the README's commands were not found"
    ran: list[str] = []
    for written in commands:
        if skipped_because(written) is not None:
            continue
        if written.startswith("uv run delegate runs list"):
            # Something in flight to list and to stop: a detached run the model holds.
            held = world.run('uv run delegate run --detached "HANG until stopped"')
            assert held.returncode == 0, held.stderr
            run_id = re.search(r"run ([0-9a-f-]{36})", held.stdout + held.stderr)
            assert run_id, held.stdout + held.stderr
            world.ids["<run>"] = run_id.group(1)
        command = world.fill(written)
        if written.startswith("uv run delegate watch"):
            check_watch(world, command)
            ran.append(written)
            continue
        result = world.run(command)
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"{written}\n{output}"
        assert "Traceback" not in output, f"{written}\n{output}"
        assert "INVALID_RETURN" not in output, f"{written}\n{output}"
        assert "rejected" not in output, f"{written}\n{output}"
        world.learn(output)
        ran.append(written)
        if written.startswith("uv run delegate run --detached"):
            wait_until_idle(world)
    assert any("--role developer" in c for c in ran)
    assert any("runs stop" in c for c in ran)


def check_watch(world: World, command: str) -> None:
    """``watch --json`` runs until stopped and prints a change as JSON."""
    proc = subprocess.Popen(
        ["bash", "-c", UV_RUN + "exec " + command],
        cwd=world.repo,
        env=world.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(3)
        follow = world.run('uv run delegate run "one more change to watch"')
        assert follow.returncode == 0, follow.stderr
        time.sleep(3)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert lines, f"watch printed nothing; stderr: {err}"
    assert "Traceback" not in err


def wait_until_idle(world: World) -> None:
    """A detached run ends on its own; the next command may follow it up."""
    deadline = time.monotonic() + COMMAND_TIMEOUT_S
    while time.monotonic() < deadline:
        listed = world.run("uv run delegate runs list --status running --json")
        if listed.returncode == 0 and not json.loads(listed.stdout)["runs"]:
            return
        time.sleep(0.5)
    raise AssertionError("the detached run never ended")


def test_every_readme_line_is_run_or_says_why_not() -> None:
    for command in readme_commands():
        assert skipped_because(command) != "not a delegate command", (
            f"README line {command!r} is neither run by the test nor listed in NOT_RUN"
        )
