"""A project, Claude Code's folder with one session's transcript, a data folder, and the
other delegate processes a hook may meet: one holding the import lock, one holding the
store. Shared by the hook tests and the hooks reliability trials."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hostile_trees import claude_lines, jsonl
from support import DELEGATE, cli_env

SID = "5b0c3f6e-1d7a-4e8e-9a51-2f3c4d5e6f70"
CODEX_SID = "019a7b3c-1d2e-7f30-8a41-5b6c7d8e9f01"
OTHER_TIMEOUT_S = 60.0

_HOLD_IMPORT_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""
_HOLD_STORE = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""


class World:
    """A project (a git repository), Claude Code's folder with one transcript, a data folder."""

    def __init__(self, root: Path, extra_env: Mapping[str, str] | None = None) -> None:
        self.extra_env = dict(extra_env or {})
        self.home = root
        self.repo = root / "project"
        self.repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        self.claude = root / "claude"
        self.codex = root / "codex"
        self.data = root / "data"
        self.transcript = self.claude / "projects" / "-project" / f"{SID}.jsonl"
        self.transcript.parent.mkdir(parents=True)

    def turn(self, input_tokens: int, sid: str = SID) -> None:
        """The session's transcript after a turn whose model call carried ``input_tokens``."""
        lines = claude_lines(sid, "work on the pong module", input_tokens=input_tokens)
        for line in lines:
            line["cwd"] = str(self.repo)
        (self.transcript.parent / f"{sid}.jsonl").write_bytes(jsonl(lines))

    def env(self) -> dict[str, str]:
        agents = {"CLAUDE_CONFIG_DIR": str(self.claude), "CODEX_HOME": str(self.codex)}
        return cli_env(self.home, agents | self.extra_env)

    def hook(
        self,
        event: str,
        payload: dict[str, Any] | str | bytes,
        *,
        agent: str = "claude-code",
        argument: str | None = None,
        timeout: float = OTHER_TIMEOUT_S,
    ) -> tuple[subprocess.CompletedProcess[bytes], float]:
        """Run ``delegate hook AGENT EVENT`` as the agent does; how it ended and its wall time."""
        if isinstance(payload, dict):
            stdin = json.dumps(payload).encode()
        else:
            stdin = (
                payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else payload
            )
        argv = [str(DELEGATE), "--data-dir", str(self.data), "hook", agent, event]
        if argument is not None:
            argv.append(argument)
        started = time.monotonic()
        done = subprocess.run(
            argv,
            input=stdin if argument is None else b"",
            capture_output=True,
            cwd=self.home,
            env=self.env(),
            timeout=timeout,
            check=False,
        )
        return done, time.monotonic() - started

    def stop_payload(self, sid: str = SID, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": sid,
            "transcript_path": str(self.transcript.parent / f"{sid}.jsonl"),
            "cwd": str(self.repo),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "done",
        } | extra

    def start_payload(self, sid: str, source: str = "startup") -> dict[str, Any]:
        return {
            "session_id": sid,
            "cwd": str(self.repo),
            "hook_event_name": "SessionStart",
            "source": source,
        }

    def hook_log(self) -> str:
        path = self.data / "hooks.log"
        return path.read_text() if path.exists() else ""

    def queued(self) -> str:
        path = self.data / "hook-queue.jsonl"
        return path.read_text() if path.exists() else ""


@contextlib.contextmanager
def held_by_another(script: str, target: Path, env: Mapping[str, str]) -> Iterator[None]:
    """A real process holding a lock (``script`` prints ``held``) until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(env),
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        try:
            holder.wait(OTHER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


def import_lock_held(world: World) -> contextlib.AbstractContextManager[None]:
    """Another delegate process importing: the data folder's import lock held."""
    return hold_import_lock(world.data, _untagged(world))


def hold_import_lock(
    data_dir: Path, env: Mapping[str, str]
) -> contextlib.AbstractContextManager[None]:
    """A real process holding ``data_dir``'s import lock, as a running import does."""
    data_dir.mkdir(parents=True, exist_ok=True)
    return held_by_another(_HOLD_IMPORT_LOCK, data_dir / "import.lock", env)


def store_held(world: World) -> contextlib.AbstractContextManager[None]:
    """Another process writing the store: an exclusive transaction held open."""
    return held_by_another(_HOLD_STORE, world.data / "delegate.sqlite3", _untagged(world))


def _untagged(world: World) -> dict[str, str]:
    """The holder's environment: not the hook's extra variables (a trial's tag marks the
    hook's processes only)."""
    return {k: v for k, v in world.env().items() if k not in world.extra_env}
