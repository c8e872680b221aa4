"""Process handling of the CLI runners, with a real (tiny, fake) CLI written by each test.

The fake ``claude`` prints a stream-json init line, starts a grandchild that
sleeps, then hangs, fails or finishes as told: the tests check our process
group handling, not the CLI.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support import db_path, write_config

from core.config import AgentConfig
from core.models import RunStatus
from core.orchestrator import AgentOrchestrator
from core.runners import subprocess as cli
from core.runners.base import (
    ConversationIdAssigned,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequest,
    RunStarted,
    closing,
)
from core.runners.claude_code import ClaudeCodeRunner
from core.runners.codex import CodexRunner

FAKE_CLI = """#!{python}
import json, os, signal, subprocess, sys, time
mode = os.environ["FAKE_MODE"]
stubborn = "stubborn" in mode
if stubborn:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time\\n"
    + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n" if stubborn else "")
    + "time.sleep(600)"])
with open(os.environ["FAKE_PIDS"], "w") as fh:
    fh.write(f"{{os.getpid()}} {{child.pid}}")
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
if mode.startswith("hang"):
    time.sleep(600)
if mode == "fail":
    print("fatal: no credentials found", file=sys.stderr, flush=True)
    sys.exit(3)
print(json.dumps({{"type": "assistant", "message": {{"id": "m", "content": [
    {{"type": "text", "text": "done"}}]}}}}), flush=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
# exits with the grandchild still running and holding stdout open
"""


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    path = tmp_path / "fake-claude"
    path.write_text(FAKE_CLI.format(python=sys.executable))
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :][:1] != "Z"


async def wait_for_pids(pidfile: Path) -> list[int]:
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the fake CLI never started"
        await asyncio.sleep(0.02)
    return [int(p) for p in pidfile.read_text().split()]


def runner_for(fake: Path, tmp_path: Path, mode: str) -> tuple[ClaudeCodeRunner, Path]:
    pidfile = tmp_path / f"pids-{mode}"
    config = AgentConfig(
        runner="claude_code",
        binary=str(fake),
        env={"FAKE_MODE": mode, "FAKE_PIDS": str(pidfile)},
    )
    return ClaudeCodeRunner.from_config("claude-code", config), pidfile


async def collect(events: AsyncIterator[RunEvent]) -> list[RunEvent]:
    return [e async for e in events]


def request(tmp_path: Path) -> RunRequest:
    return RunRequest("r1", "c1", "claude-code", "hi", tmp_path, 1)


@pytest.mark.parametrize("mode", ["hang", "hang-stubborn"])
async def test_cancel_kills_the_whole_group(
    fake_claude: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "KILL_GRACE_S", 0.5)
    runner, pidfile = runner_for(fake_claude, tmp_path, mode)
    task = asyncio.create_task(collect(runner.run(request(tmp_path))))
    pids = await wait_for_pids(pidfile)
    assert all(alive(p) for p in pids)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # SIGTERM, then SIGKILL after the grace period for what ignores it.
    assert time.monotonic() - started < 5
    assert not any(alive(p) for p in pids)


async def test_failure_carries_the_stderr_tail(fake_claude: Path, tmp_path: Path) -> None:
    runner, pidfile = runner_for(fake_claude, tmp_path, "fail")
    events = await collect(runner.run(request(tmp_path)))
    assert isinstance(events[0], RunStarted)
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error.startswith("claude exited with code 3 before a result")
    assert "fatal: no credentials found" in failed.error
    assert "fatal: no credentials found" in failed.stderr
    assert not any(alive(p) for p in await wait_for_pids(pidfile))


async def test_a_finished_run_sweeps_background_children(fake_claude: Path, tmp_path: Path) -> None:
    runner, pidfile = runner_for(fake_claude, tmp_path, "ok")
    started = time.monotonic()
    events = await collect(runner.run(request(tmp_path)))
    # The grandchild holds stdout open: the run ends on the result, not on EOF.
    assert time.monotonic() - started < 10
    assert isinstance(events[-1], RunCompleted)
    assert not any(alive(p) for p in await wait_for_pids(pidfile))


def test_stderr_keeps_only_the_tail() -> None:
    process = cli.CliProcess.__new__(cli.CliProcess)
    process._stderr = bytearray()
    chunk = b"x" * 40_000
    for _ in range(3):
        process._stderr += chunk
        if len(process._stderr) > cli.STDERR_KEEP:
            del process._stderr[: len(process._stderr) - cli.STDERR_KEEP]
    assert len(process.stderr_tail) == cli.STDERR_KEEP


@pytest.fixture
async def orch_with_fake(
    tmp_path: Path, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    # The import after a CLI run reads $HOME: keep it off this machine's transcripts.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    pidfile = tmp_path / "pids-orch"
    data = write_config(
        tmp_path / "data",
        f"""
[agents.fake]
runner = "claude_code"
binary = "{fake_claude}"
env = {{ FAKE_MODE = "fail", FAKE_PIDS = "{pidfile}" }}
""",
    )
    orch = await AgentOrchestrator.open(data)
    yield orch, pidfile
    await orch.close(wait=False)


async def test_orchestrator_keeps_stderr_on_the_failed_run_and_no_messages(
    orch_with_fake: tuple[AgentOrchestrator, Path], tmp_path: Path
) -> None:
    orch, _ = orch_with_fake
    [handle] = await orch.delegate("hello", "fake", cwd=str(tmp_path))
    run = await handle.wait()
    assert run.status is RunStatus.FAILED
    assert run.stderr is not None
    assert "fatal: no credentials found" in run.stderr
    assert run.error is not None
    assert "fatal: no credentials found" in run.error
    session = await orch.get_session(handle.conversation_id)
    assert session.metrics.turns == 1  # counted, although the CLI keeps the transcript
    page = await orch.recent_messages(handle.conversation_id, 10)
    # Nothing of ours: the prompt belongs to the CLI's own transcript, the error to the run.
    assert page.messages == []
    assert os.environ.get("FAKE_MODE") is None


FAKE_CODEX = """#!{python}
import json, os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.environ["FAKE_PIDS"], "w") as fh:
    fh.write(f"{{os.getpid()}} {{child.pid}}")
gate = os.environ["FAKE_GATE"]
while not os.path.exists(gate):
    time.sleep(0.02)
print(json.dumps({{"type": "thread.started", "thread_id": "{thread}"}}), flush=True)
time.sleep(600)
"""
THREAD_ID = "0199a3c2-7d1e-7a40-9b0e-3f2a1c4d5e6f"


async def test_a_loop_body_that_raises_kills_the_group_before_the_run_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body is cancelled mid-way (re-keying to Codex's thread id
    while another process holds the store's write lock): when the run is stored
    closed, the CLI and its child are already gone."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setattr(cli, "KILL_GRACE_S", 0.5)
    fake = tmp_path / "fake-codex"
    fake.write_text(FAKE_CODEX.format(python=sys.executable, thread=THREAD_ID))
    fake.chmod(0o755)
    pidfile, gate = tmp_path / "pids", tmp_path / "gate"
    data = write_config(
        tmp_path / "data",
        f"""
[agents.fakecodex]
runner = "codex"
binary = "{fake}"
env = {{ FAKE_PIDS = "{pidfile}", FAKE_GATE = "{gate}" }}
""",
    )
    orch = await AgentOrchestrator.open(data)
    try:
        [handle] = await orch.delegate("hello", "fakecodex", cwd=str(tmp_path))
        pids = await wait_for_pids(pidfile)
        with sqlite3.connect(db_path(data), isolation_level=None) as other:
            other.execute("BEGIN IMMEDIATE")  # the re-key will wait for this
            gate.touch()
            await asyncio.sleep(0.5)  # the thread id is read; the re-key waits on the lock
            handle.cancel()
            await asyncio.sleep(0.2)
            other.execute("ROLLBACK")
        run = await asyncio.wait_for(handle.wait(), 20)
        assert run.status is RunStatus.CANCELLED
        assert not any(alive(p) for p in pids)
    finally:
        await orch.close(wait=False)


async def test_closing_a_runner_stream_kills_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "KILL_GRACE_S", 0.5)
    fake = tmp_path / "fake-codex"
    fake.write_text(FAKE_CODEX.format(python=sys.executable, thread=THREAD_ID))
    fake.chmod(0o755)
    pidfile, gate = tmp_path / "pids", tmp_path / "gate"
    gate.touch()
    config = AgentConfig(
        runner="codex", binary=str(fake), env={"FAKE_PIDS": str(pidfile), "FAKE_GATE": str(gate)}
    )
    runner = CodexRunner.from_config("codex", config)

    async def consume() -> None:
        async with closing(runner.run(request(tmp_path))) as events:
            async for event in events:
                if isinstance(event, ConversationIdAssigned):  # the CLI is running
                    raise RuntimeError("the loop body failed")

    with pytest.raises(RuntimeError, match="body"):
        await consume()
    assert not any(alive(p) for p in await wait_for_pids(pidfile))


def watchdogs_of(pgid: int) -> list[int]:
    """Live watchdog processes guarding group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not alive(int(entry.name)):
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"read goodbye" in b" ".join(argv) and str(pgid).encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mode", ["ok", "hang"])
async def test_the_watchdog_leaves_with_the_run(
    fake_claude: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that ends (finished or cancelled) leaves no watchdog behind."""
    monkeypatch.setattr(cli, "KILL_GRACE_S", 0.5)
    runner, pidfile = runner_for(fake_claude, tmp_path, mode)
    task = asyncio.create_task(collect(runner.run(request(tmp_path))))
    leader = (await wait_for_pids(pidfile))[0]
    if mode == "hang":  # ("ok" may be over before a scan could see it)
        deadline = time.monotonic() + 10
        while not watchdogs_of(leader):
            assert time.monotonic() < deadline, "no watchdog started"
            await asyncio.sleep(0.02)
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    deadline = time.monotonic() + 5
    while watchdogs_of(leader):
        assert time.monotonic() < deadline, "the watchdog outlived the run"
        await asyncio.sleep(0.02)


async def test_a_watchdog_told_goodbye_has_exited_when_goodbye_returns() -> None:
    """A run is over only once its watchdog's exit is recorded. A subprocess still
    running when its event loop closes is killed by pid when its transport is
    collected, and by then the pid may be another child's (pids wrap around)."""
    guarded = await asyncio.create_subprocess_exec("sleep", "30", start_new_session=True)
    try:
        watchdog = await cli._start_watchdog(guarded.pid)
        assert watchdog is not None
        await watchdog.goodbye()
        assert watchdog.process.returncode == 0  # exited by itself, and the loop knows it
        assert guarded.returncode is None  # goodbye kills nothing
    finally:
        guarded.kill()
        await guarded.wait()
