"""What reaches an agent CLI's argv, through the ``delegate`` console script.

Stand-in ``claude`` and ``codex`` executables on ``PATH`` log their argv (one
JSON list a line) and print a stream a test wrote; the real CLIs' parsing of
the same forms is checked in ``tests/e2e``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import BASE_US, finished, json_out, run_cli

from core.config import DB_FILENAME
from core.store import Store

SESSION = "11111111-2222-4333-8444-555555555555"
THREAD = "019c8a53-a0dd-7130-bcd7-95445d84846a"
# Ids an attacker (or an unlucky sync) can write into a transcript on disk.
CLAUDE_HOSTILE = ("--dangerously-skip-permissions", "-p")
CODEX_HOSTILE = ("--dangerously-bypass-approvals-and-sandbox", "--last")
DEEP = 100_000

STAND_IN = """#!{python}
import json, os, sys
name = os.path.basename(sys.argv[0])
with open(os.path.join({logs!r}, name + ".argv"), "a", encoding="utf-8") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
with open(os.path.join({logs!r}, name + ".out"), "rb") as fh:
    sys.stdout.buffer.write(fh.read())
"""

CLAUDE_OUT = [
    {"type": "system", "subtype": "init", "session_id": SESSION},
    {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "done"}]}},
    {"type": "result", "subtype": "success", "usage": {"input_tokens": 5, "output_tokens": 2}},
]
CODEX_OUT = [
    {"type": "thread.started", "thread_id": THREAD},
    {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
    {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 2}},
]


@dataclass
class World:
    """A HOME with stand-in CLIs on PATH and a data folder."""

    home: Path
    logs: Path
    bin: Path

    @property
    def data(self) -> Path:
        return self.home / "data"

    def stream(self, cli: str, lines: list[Any]) -> None:
        """What the stand-in ``cli`` prints: JSON values, or raw strings as they are."""
        text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
        (self.logs / f"{cli}.out").write_text(text, encoding="utf-8")

    def argvs(self, cli: str) -> list[list[str]]:
        """Every argv the stand-in ``cli`` was started with (none: it never started)."""
        log = self.logs / f"{cli}.argv"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]

    def delegate(self, *args: str) -> Any:
        path = os.pathsep.join([str(self.bin), os.environ.get("PATH", "")])
        return run_cli(
            "--data-dir", str(self.data), *args, home=self.home, env={"PATH": path}, timeout=120
        )


@pytest.fixture
def world(tmp_path: Path) -> World:
    home, logs, bindir = tmp_path / "home", tmp_path / "logs", tmp_path / "bin"
    for folder in (home, logs, bindir):
        folder.mkdir()
    for cli in ("claude", "codex"):
        script = bindir / cli
        script.write_text(STAND_IN.format(python=sys.executable, logs=str(logs)))
        script.chmod(0o755)
    w = World(home, logs, bindir)
    w.stream("claude", CLAUDE_OUT)
    w.stream("codex", CODEX_OUT)
    return w


def deep_lines() -> list[str]:
    """JSON nested far past any recursion limit: an array, and inside an object."""
    array = "[" * DEEP + "]" * DEEP
    return [array, '{"type": "assistant", "message": ' + array + "}"]


# --- a line nested 100,000 deep is skipped, the run goes on ----------------


def test_claude_line_nested_100000_deep_is_skipped_and_the_run_completes(world: World) -> None:
    world.stream("claude", [CLAUDE_OUT[0], *deep_lines(), *CLAUDE_OUT[1:]])
    result = world.delegate("run", "--agent", "claude-code", "hello")
    assert result.returncode == 0, result.stderr
    assert "done" in result.stdout
    assert "RecursionError" not in result.stderr


def test_codex_line_nested_100000_deep_is_skipped_and_the_run_completes(world: World) -> None:
    world.stream("codex", [CODEX_OUT[0], *deep_lines(), *CODEX_OUT[1:]])
    result = world.delegate("run", "--agent", "codex", "hello")
    assert result.returncode == 0, result.stderr
    assert "done" in result.stdout
    assert "RecursionError" not in result.stderr


# --- prompts and ids are never options -------------------------------------


@pytest.mark.parametrize("prompt", ["-p", "--dangerously-skip-permissions", "--last"])
def test_a_prompt_that_looks_like_an_option_reaches_each_cli_after_its_separator(
    world: World, prompt: str
) -> None:
    for cli, agent in (("claude", "claude-code"), ("codex", "codex")):
        result = world.delegate("run", "--agent", agent, "--", prompt)
        assert result.returncode == 0, result.stderr
        [argv] = world.argvs(cli)
        assert argv[argv.index("--") :] == ["--", prompt]  # the first separator, then only it


def test_follow_ups_glue_the_id_to_its_option_or_put_it_after_the_separator(
    world: World,
) -> None:
    launched = world.delegate("run", "--agent", "claude-code", "hello")
    assert launched.returncode == 0, launched.stderr
    [launch] = world.argvs("claude")
    [session_arg] = [a for a in launch if a.startswith("--session-id")]
    session = session_arg.removeprefix("--session-id=")
    followed = world.delegate("run", f"--session={session}", "--", "-p")
    assert followed.returncode == 0, followed.stderr
    assert world.argvs("claude")[1][-3:] == [f"--resume={session}", "--", "-p"]

    launched = world.delegate("run", "--agent", "codex", "hello")
    assert launched.returncode == 0, launched.stderr
    followed = world.delegate("run", f"--session={THREAD}", "--", "--last")
    assert followed.returncode == 0, followed.stderr
    assert world.argvs("codex")[1][-4:] == ["resume", "--", THREAD, "--last"]


def _claude_transcript(world: World, session_id: str) -> None:
    project = world.home / ".claude" / "projects" / "-work"
    project.mkdir(parents=True, exist_ok=True)
    line = {
        "type": "user",
        "sessionId": session_id,
        "cwd": str(world.home),
        "timestamp": "2026-05-11T13:28:45.000Z",
        "message": {"role": "user", "content": f"prompt of {session_id}"},
    }
    (project / f"{session_id}.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")


def _codex_rollout(world: World, meta_id: str, file_id: str) -> None:
    day = world.home / ".codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True, exist_ok=True)
    lines = [
        {
            "timestamp": "2026-05-11T13:28:45.000Z",
            "type": "session_meta",
            "payload": {"id": meta_id, "cwd": str(world.home), "cli_version": "0.169.0"},
        },
        {
            "timestamp": "2026-05-11T13:28:46.000Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": f"prompt of {meta_id}"},
        },
    ]
    path = day / f"rollout-2026-05-11T13-28-45-{file_id}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_import_skips_and_counts_sessions_whose_ids_are_options(world: World) -> None:
    _claude_transcript(world, SESSION)
    for hostile in CLAUDE_HOSTILE:
        _claude_transcript(world, hostile)
    _codex_rollout(world, THREAD, THREAD)
    for n, hostile in enumerate(CODEX_HOSTILE):
        # The name looks right; the id inside is what Codex would be resumed with.
        _codex_rollout(world, hostile, f"019c8a53-a0dd-7130-bcd7-95445d84846{n}")

    report = json_out(world.delegate("import", "--json"))
    assert report["sessions_skipped_invalid_id"] == 4
    assert report["sessions_added"] == 2
    listed = json_out(world.delegate("sessions", "list", "--json"))
    assert {s["conversation_id"] for s in listed["sessions"]} == {SESSION, THREAD}

    for hostile in (*CLAUDE_HOSTILE, *CODEX_HOSTILE):
        result = world.delegate("run", f"--session={hostile}", "hello")
        assert result.returncode == 1
        assert "unknown_conversation" in result.stderr
    assert world.argvs("claude") == world.argvs("codex") == []


def _store_sessions(world: World, sessions: dict[str, str]) -> None:
    """Sessions an older delegate imported, before ids were checked (id -> agent)."""

    async def fill() -> None:
        store = await Store.open(world.data / DB_FILENAME)
        try:
            await store.bulk.insert(
                [
                    finished(cid, BASE_US + n, agent_id=agent)
                    for n, (cid, agent) in enumerate(sessions.items())
                ]
            )
        finally:
            await store.close()

    world.data.mkdir(mode=0o700, exist_ok=True)
    asyncio.run(fill())


def test_a_stored_option_shaped_id_is_refused_before_any_cli_starts(world: World) -> None:
    hostile = {cid: "claude-code" for cid in CLAUDE_HOSTILE}
    hostile |= {cid: "codex" for cid in CODEX_HOSTILE}
    hostile |= {"../../etc": "codex", "a b": "claude-code", "x\ny": "claude-code"}
    _store_sessions(world, hostile)

    for cid in hostile:
        result = world.delegate("run", f"--session={cid}", "hello")
        assert result.returncode == 1
        assert "invalid_id" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        request = json.dumps({"conversation_id": cid, "prompt": "hello"})
        payload = json_out(world.delegate("tool", "delegate_agent", request))
        assert payload["error"]["code"] == "invalid_id"
    assert world.argvs("claude") == world.argvs("codex") == []

    # Refused before the claim: the sessions are still idle and have no run.
    listed = json_out(world.delegate("sessions", "list", "--json"))
    assert {s["state"] for s in listed["sessions"]} == {"idle"}


def test_a_thread_id_that_is_an_option_is_never_adopted(world: World) -> None:
    world.stream("codex", [{"type": "thread.started", "thread_id": "--last"}, *CODEX_OUT[1:]])
    result = world.delegate("run", "--agent", "codex", "hello")
    assert result.returncode == 0, result.stderr
    listed = json_out(world.delegate("sessions", "list", "--json"))
    [session] = listed["sessions"]
    assert session["conversation_id"] != "--last"
    followed = world.delegate("run", f"--session={session['conversation_id']}", "again")
    assert followed.returncode == 0, followed.stderr
    assert "--last" not in world.argvs("codex")[1]
