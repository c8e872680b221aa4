"""Detached runs: the background process that owns a run its caller does not wait for.

A detached launch or follow-up is validated and recorded by its caller like any
other run, but executed by a worker process of its own (``python -m
core.detached_worker``, in a session of its own) that outlives the caller:
killing the caller, or Ctrl+C in its terminal, changes nothing about the run.

The handshake leaves no moment where a recorded run has no live owner, and no
worker that runs something nobody recorded:

1. the caller starts the worker, which blocks reading its standard input;
2. the caller records the session and run with the WORKER as owner (its pid and
   start time): should the worker die from here on, any reader of the store
   marks the run ``interrupted``;
3. the caller writes the go message (the settings it validated against, and
   what the runner needs to know) to the worker's stdin and closes it.

Should recording fail (``agent_busy``, ``session_not_ready``, a cancel), the
caller stops the worker instead; should the caller die before step 3, the
worker reads an empty stdin and exits without touching the store.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from core import process_identity
from core.atomic_files import is_disk_full
from core.config import Settings
from core.errors import DiskFull, RunnerUnavailable, WorkerUnavailable
from core.returns.model import AgentRole, RoleLaunch
from core.runners.base import RunEvent, RunRequest

WORKER_MODULE = "core.detached_worker"
LOG_FILENAME = "detached.log"  # the workers' own output (errors, tracebacks of bugs)


@dataclass(frozen=True, slots=True)
class GoMessage:
    """What the caller hands its worker once the run is recorded.

    The run itself (prompt, agent, conversation) is read back from the store,
    where the worker also checks that it is the run's recorded owner; the rest
    is what the caller validated against: its settings (so an edit of
    ``config.toml`` meanwhile changes nothing) and the folder it checked.
    """

    run_id: str
    settings: Settings
    cwd: str
    turn: int
    context_tokens: int
    system_prompt: str = ""  # a sub-agent's share of its parent, for an agent CLI
    role: RoleLaunch | None = None  # a launch as a role of a group: its return is judged

    def encode(self) -> bytes:
        return json.dumps(
            {
                "run_id": self.run_id,
                "settings": self.settings.model_dump(mode="json"),
                "cwd": self.cwd,
                "turn": self.turn,
                "context_tokens": self.context_tokens,
                "system_prompt": self.system_prompt,
                "role": _role_data(self.role),
            }
        ).encode("utf-8")

    @classmethod
    def decode(cls, raw: bytes) -> GoMessage:
        """Parse a go message; anything malformed raises ``ValueError``."""
        try:
            data: Any = json.loads(raw)
            return cls(
                str(data["run_id"]),
                Settings.model_validate(data["settings"]),
                str(data["cwd"]),
                int(data["turn"]),
                int(data["context_tokens"]),
                str(data.get("system_prompt") or ""),
                _role_of(data.get("role")),
            )
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            raise ValueError(f"malformed go message: {exc}") from None


def _role_data(launch: RoleLaunch | None) -> dict[str, Any] | None:
    if launch is None:
        return None
    previous = list(launch.previous) if launch.previous is not None else None
    return {
        "role": launch.role.value,
        "artifacts_session": launch.artifacts_session,
        "group_id": launch.group_id,
        "previous": previous,
    }


def _role_of(data: Any) -> RoleLaunch | None:
    if data is None:
        return None
    previous = data.get("previous")
    return RoleLaunch(
        AgentRole(data["role"]),
        str(data["artifacts_session"]),
        str(data["group_id"]),
        (AgentRole(previous[0]), str(previous[1])) if previous else None,
    )


@dataclass(frozen=True, slots=True)
class UnavailableRunner:
    """Stands in for a runner the worker cannot build: its run fails, naming why."""

    reason: str
    owns_transcript: ClassVar[bool] = False
    wants_history: ClassVar[bool] = False

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        raise RunnerUnavailable(self.reason)
        yield  # an async generator, like every runner


@dataclass(frozen=True, slots=True)
class Worker:
    """A started worker waiting for its go message."""

    process: subprocess.Popen[bytes]
    identity: process_identity.ProcessIdentity

    def go(self, message: GoMessage) -> None:
        """Hand the worker its run (synchronous: no await between record and go)."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(message.encode())
            stdin.close()
        except OSError:  # the worker died already: any reader marks its run interrupted
            pass

    def abandon(self) -> None:
        """The run was never recorded: the worker exits without touching the store."""
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()  # an empty go message: nothing to do
        with contextlib.suppress(OSError):
            self.process.send_signal(signal.SIGKILL)

    def stop(self) -> None:
        """Ask the worker to cancel its run (stored ``cancelled``, partial reply kept).

        Through the ``Popen``: once the worker is reaped nothing is signalled, so a
        reused pid is never hit.
        """
        with contextlib.suppress(OSError):
            self.process.send_signal(signal.SIGTERM)


def _open_log(data_dir: Path) -> int:
    """The workers' log in the data folder, appended to; only a regular file is used."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(data_dir / LOG_FILENAME, flags | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(str(data_dir), f"cannot open {LOG_FILENAME}") from None
        raise WorkerUnavailable(
            f"cannot open the detached runs' log in {data_dir}: {exc}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise WorkerUnavailable(f"{data_dir / LOG_FILENAME} is not a regular file; move it aside")
    os.set_blocking(fd, True)
    return fd


def worker_argv(data_dir: Path) -> list[str]:
    """The worker's command line: no id on it (the run id comes with the go message),
    the folder as ``--data-dir=PATH`` so no value can read as an option.

    ``-P``: the worker's folder (the data folder) is not put on ``sys.path``.
    """
    return [sys.executable, "-P", "-m", WORKER_MODULE, f"--data-dir={data_dir.resolve()}"]


def spawn_worker(data_dir: Path) -> Worker:
    """Start a worker that will own the run its go message names, in a session of its own.

    Its stdin is the go pipe, its output goes to the data folder's log, its
    environment is the caller's. A daemon thread reaps it when it ends, so a
    long-lived caller (the panel, the MCP server) keeps no zombie whose pid
    would still look alive; a short-lived caller just exits, and the worker
    lives on.
    """
    log = _open_log(data_dir)
    try:
        process = subprocess.Popen(
            worker_argv(data_dir),
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
            cwd=data_dir,
            start_new_session=True,  # a terminal's Ctrl+C or hang-up never reaches it
        )
    except OSError as exc:
        raise WorkerUnavailable(f"cannot start the detached run's process: {exc}") from None
    finally:
        os.close(log)
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()
    return Worker(process, process_identity.of_pid(process.pid))
