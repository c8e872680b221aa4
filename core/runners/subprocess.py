"""Run an agent CLI as a child process: argv lists, its own process group, no orphans.

Shared by the ``claude_code`` and ``codex`` runners. The child starts in a new
session (``start_new_session=True``), so it and everything it spawns form one
process group; leaving :func:`cli_process` any way but a clean exit (a task
cancel, an error in the caller) sends SIGTERM to the whole group, then SIGKILL
after a grace period. Even a clean exit sweeps the group, so a tool the agent
started in the background cannot outlive the run. Standard error is read all
along (a full pipe would stall the child), its last 64 KiB are kept, and its
lines are handed out as they arrive (:class:`StderrLine`, between stdout lines).

A group must not outlive delegate either, even one killed with SIGKILL (no
``finally`` runs then): beside each CLI runs a watchdog, a tiny ``sh`` in its
own session that holds the read end of a pipe whose only writer is delegate.
When delegate says goodbye the watchdog exits; when the pipe ends without a
goodbye (delegate died, the kernel closed its end) it kills the whole group.
This covers the CLI's own children too, which a parent-death signal would not.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import re
import shutil
import signal
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import process_identity
from core.errors import RunnerUnavailable
from core.runners.base import StderrLine

STDERR_KEEP = 64 * 1024
STDERR_LINE_MAX = 8 * 1024  # a longer stderr "line" (no newline yet) is handed out cut
STDERR_LINES_PENDING = 200  # lines not yet taken: beyond this the oldest are dropped
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # \r alone: a progress line redrawn in place
KILL_GRACE_S = 3.0
DRAIN_AFTER_EXIT_S = 0.5  # reading on once the CLI exited, for lines still in the pipe
SWEEP_WAIT_S = 2.0
EXIT_WAIT_S = 10.0  # a CLI whose output ended gets this long to exit by itself
# One JSON line of a stream can be large (a tool result with a whole file).
LINE_LIMIT = 64 * 1024 * 1024
# Reads one line: a goodbye means the run ended in order; end of file without
# one means delegate died, so the group ($0) is killed.
WATCHDOG_SCRIPT = 'read goodbye || kill -9 "-$0" 2>/dev/null'  # dash has no "kill --"
WATCHDOG_SHELL = "/bin/sh"
WATCHDOG_EXIT_S = 2.0

log = logging.getLogger(__name__)

ProcessStarted = Callable[[int], Awaitable[None]]
on_process_started: contextvars.ContextVar[ProcessStarted | None] = contextvars.ContextVar(
    "on_process_started", default=None
)
"""Called with the pid of each CLI :func:`cli_process` starts, before any output
is read. The orchestrator sets it in a run's task to record the agent process
(so a later process can find the CLI if this one dies); runners need not know."""


def resolve_binary(binary: str, env: Mapping[str, str], setting: str) -> str:
    """The executable to run, or ``runner_unavailable`` naming the setting to fix."""
    path = env.get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(binary, path=path)
    if found is None:
        raise RunnerUnavailable(
            f"{binary} binary not found: set {setting} in config.toml (a path, or a name on PATH)"
        )
    return found


@dataclass
class CliProcess:
    """A running CLI: its stdout lines, its exit code, the tail of its stderr."""

    process: asyncio.subprocess.Process
    _stderr: bytearray = field(default_factory=bytearray)
    _stderr_task: asyncio.Task[None] | None = None
    _stderr_partial: bytearray = field(default_factory=bytearray)
    _stderr_lines: asyncio.Queue[str] = field(
        default_factory=lambda: asyncio.Queue(STDERR_LINES_PENDING)
    )

    @property
    def pid(self) -> int:
        return self.process.pid

    async def lines(self) -> AsyncGenerator[str | StderrLine, None]:
        """Standard output, one decoded line at a time (newline stripped), with
        standard error's lines as :class:`StderrLine` in between as they arrive.

        Ends at EOF, or shortly after the CLI itself exits: a child it left
        behind may hold the pipe open forever.
        """
        assert self.process.stdout is not None
        stdout = self.process.stdout
        leader_exit = asyncio.ensure_future(exited(self.process))
        read: asyncio.Future[bytes] | None = None
        err: asyncio.Future[str] | None = None
        try:
            while True:
                if read is None:
                    read = asyncio.ensure_future(stdout.readline())
                if err is None:
                    err = asyncio.ensure_future(self._stderr_lines.get())
                waiting: set[asyncio.Future[Any]] = {read, err, leader_exit}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if err.done():
                    line, err = err.result(), None
                    yield StderrLine(line)
                    continue
                if not read.done():
                    # Exited: what it wrote is already in the pipe, so this is quick.
                    try:
                        await asyncio.wait_for(asyncio.shield(read), DRAIN_AFTER_EXIT_S)
                    except TimeoutError:
                        return
                raw = read.result()
                read = None
                if not raw:
                    return
                yield raw.decode("utf-8", "replace").rstrip("\r\n")
        finally:
            for pending in (read, err, leader_exit):
                if pending is not None and not pending.done():
                    pending.cancel()

    @property
    def returncode(self) -> int:
        """The exit code; read it once the block is left (the process is reaped by then)."""
        code = self.process.returncode
        return -1 if code is None else code

    @property
    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self._stderr += chunk
            if len(self._stderr) > STDERR_KEEP:
                del self._stderr[: len(self._stderr) - STDERR_KEEP]
            self._split_stderr(chunk)
        if self._stderr_partial:
            self._offer_line(bytes(self._stderr_partial))

    def _split_stderr(self, chunk: bytes) -> None:
        """Hand out each whole stderr line; keep the unfinished one for the next chunk."""
        *whole, rest = _LINE_BREAK.split(bytes(self._stderr_partial) + chunk)
        for raw in whole:
            self._offer_line(raw)
        if len(rest) > STDERR_LINE_MAX:  # no line break in sight: show what there is
            self._offer_line(rest[:STDERR_LINE_MAX])
            rest = b""
        self._stderr_partial = bytearray(rest)

    def _offer_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        if not line:
            return
        if self._stderr_lines.full():  # nobody is reading: the newest lines matter most
            self._stderr_lines.get_nowait()
        self._stderr_lines.put_nowait(line)


@contextlib.asynccontextmanager
async def cli_process(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
) -> AsyncIterator[CliProcess]:
    """Start ``argv`` (no shell) with stdin at /dev/null; the group never outlives the block."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=LINE_LIMIT,
    )
    cli = CliProcess(process)
    cli._stderr_task = asyncio.create_task(cli._drain_stderr())
    watchdog: Watchdog | None = None
    try:
        watchdog = await _start_watchdog(process.pid)
        await _announce(process.pid)
        yield cli
    except BaseException:
        await terminate_group(process)
        raise
    else:
        # Left normally (the stream ended): let the CLI finish writing its
        # transcript and exit on its own before anything is signalled.
        try:
            await asyncio.wait_for(exited(process), EXIT_WAIT_S)
        except TimeoutError:
            await terminate_group(process)
    finally:
        try:
            # The leader may be gone while its children live on: sweep the group,
            # and see them gone before the run is reported over.
            if _signal_group(process.pid, signal.SIGKILL):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_group_gone(process.pid, process), SWEEP_WAIT_S)
            if cli._stderr_task is not None and not cli._stderr_task.done():
                # Whatever still writes to the pipe was just killed: read what is left.
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(cli._stderr_task), 1.0)
                cli._stderr_task.cancel()
        finally:
            if watchdog is not None:  # the group is killed by now: the watchdog may go
                await watchdog.goodbye()


async def _announce(pid: int) -> None:
    hook = on_process_started.get()
    if hook is None:
        return
    try:
        await hook(pid)
    except Exception:  # recording is a safety net: never a reason to fail the run
        log.exception("recording agent process %d failed", pid)


def stop_orphan(pid: int, started: int | None, wait: float = SWEEP_WAIT_S) -> bool:
    """SIGKILL the process group of an agent CLI a dead delegate left behind.

    ``pid`` led its own group (``start_new_session``); it is signalled only if
    it is still the process that was recorded (same start time), never a
    process that reused the pid. Blocking (polls until the group is gone):
    call it in a thread. True when something was stopped.
    """
    if started is None or process_identity.start_time(pid) != started:
        return False
    if not _signal_group(pid, signal.SIGKILL):
        return False
    deadline = time.monotonic() + wait
    while _group_has_live_members(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return True


@dataclass
class Watchdog:
    """Kills a CLI's process group if delegate dies first (see the module docstring)."""

    process: asyncio.subprocess.Process
    write_fd: int

    async def goodbye(self) -> None:
        """The run ended in order: the watchdog exits without killing anything.

        Returns once its exit is recorded. A subprocess still running when its event
        loop closes is killed by pid when its transport is collected, and by then the
        pid may be another child's.
        """
        with contextlib.suppress(OSError):  # already gone: nothing to tell
            os.write(self.write_fd, b"bye\n")
        os.close(self.write_fd)
        with contextlib.suppress(TimeoutError):  # it only reads a line: never this slow
            await asyncio.wait_for(self.process.wait(), WATCHDOG_EXIT_S)


async def _start_watchdog(pgid: int) -> Watchdog | None:
    """Start the watchdog of group ``pgid``; None where there is no POSIX shell."""
    if not os.path.exists(WATCHDOG_SHELL):  # pragma: no cover - not POSIX
        return None
    read_fd, write_fd = os.pipe()  # both close-on-exec: no other child holds them
    try:
        process = await asyncio.create_subprocess_exec(
            WATCHDOG_SHELL,
            "-c",
            WATCHDOG_SCRIPT,
            str(pgid),
            stdin=read_fd,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # a signal to delegate's own group spares it
        )
    except OSError:  # pragma: no cover - cannot fork: run on without one
        os.close(write_fd)
        return None
    except BaseException:  # cancelled: a watchdog that did start sees the pipe end
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return Watchdog(process, write_fd)


async def exited(process: asyncio.subprocess.Process) -> int:
    """The exit code, once the process has exited.

    Not ``process.wait()``: before Python 3.12 that also waits for every pipe
    to close, and a child the CLI left behind may keep them open.
    """
    while True:  # polled: the child watcher records the exit code, nothing more
        if process.returncode is not None:
            return process.returncode
        await asyncio.sleep(0.02)


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False once it has no members left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a member changed owner
        return True
    return True


async def terminate_group(process: asyncio.subprocess.Process, grace: float | None = None) -> None:
    """SIGTERM the process group, SIGKILL it after ``grace`` seconds, reap the leader.

    Runs to the end even when the calling task is cancelled again meanwhile:
    a second cancel only cuts the grace period short.
    """
    grace = KILL_GRACE_S if grace is None else grace
    pgid = process.pid  # a session leader's pgid is its pid
    if not _signal_group(pgid, signal.SIGTERM):
        await exited(process)
        return
    cancelled = False
    try:
        await asyncio.wait_for(_group_gone(pgid, process), grace)
    except TimeoutError:
        pass
    except asyncio.CancelledError:
        cancelled = True
    _signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.shield(exited(process))
    if cancelled:
        raise asyncio.CancelledError


async def _group_gone(pgid: int, process: asyncio.subprocess.Process) -> None:
    """Return once the leader is reaped and no member of the group is left."""
    await exited(process)
    while True:  # polled: nothing notifies us when a grandchild exits
        if not _group_has_live_members(pgid):
            return
        await asyncio.sleep(0.05)


def _group_has_live_members(pgid: int) -> bool:
    """Any member of the group not yet a zombie (zombies are only waiting for a reaper)."""
    if not _signal_group(pgid, 0):
        return False
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux: trust the signal
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name (in parentheses): state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False
