"""Detached means detached: the run lives in a process of its own.

``delegate run --detached`` and ``delegate_agent`` with ``mode: "detached"``
return at once with the run id; the run is owned by a background worker that
outlives its caller (killed, or Ctrl+C in its terminal); the session is
``pending`` until its first run completes, and a follow-up before that is
``session_not_ready``. A detached launch that fails, is stopped or loses its
worker rests ``idle`` (never ``ready``) with ``last_run_status`` saying why.

Everything runs through the real console script or a real caller process,
against a gated scripted agent: its reply stops half way until a file appears,
so a run is held open for exactly as long as a test needs.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gated import gated_data_dir, read_until
from support import DELEGATE, cli_env, query, run_cli

from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.tools import delegate_agent

WAIT_S = 30.0
# The run is held open by its gate: a caller that waited for it would never return.
# Generous for a loaded test machine; the benchmark measures the real figure.
RETURNS_WITHIN_S = 20.0


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def run_row(data: Path, run_id: str) -> tuple[str, str, int | None]:
    [(status, output, owner)] = query(
        data, "SELECT status, output, owner_pid FROM runs WHERE run_id = ?", [run_id]
    )
    return status, output, owner


def session_row(data: Path, cid: str) -> tuple[str, str | None]:
    [(state, last)] = query(
        data, "SELECT state, last_run_status FROM sessions WHERE conversation_id = ?", [cid]
    )
    return state, last


def finishes(data: Path, run_id: str, status: str = "completed") -> None:
    wait_for(lambda: run_row(data, run_id)[0] != "running", f"run {run_id} to end")
    assert run_row(data, run_id)[0] == status


def worker_pids(data: Path) -> list[int]:
    """Detached workers of this data folder still alive (their command line names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"core.detached_worker" in argv and f"--data-dir={data}".encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A data folder with the ``gated`` agent; its gate opens at the end, and no worker stays."""
    data, gate = gated_data_dir(tmp_path)
    yield data, gate
    gate.touch()
    wait_for(lambda: not worker_pids(data), "the workers to exit")


def detached(tmp_path: Path, data: Path, *args: str) -> dict[str, Any]:
    """``delegate run --detached --json ARGS``: returns at once with the ids."""
    started = time.monotonic()
    result = run_cli(
        "--data-dir", str(data), "run", "--detached", "--json", *args, home=tmp_path, timeout=60
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert took < RETURNS_WITHIN_S, f"took {took:.2f}s"
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


# --- returns at once; pending until Ready ------------------------------------------


def test_run_detached_returns_at_once_and_the_session_waits_pending_until_ready(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, gate = gated
    answer = detached(tmp_path, data, "--agent", "gated", "explain the build")
    run_id, cid = answer["run_id"], answer["conversation_id"]
    assert answer["status"] == "ok"
    assert answer["run_status"] == "running"
    assert answer["session_state"] == "pending"
    assert answer["kind"] == "launch"
    status, _, owner = run_row(data, run_id)
    assert status == "running"
    assert owner in worker_pids(data)  # the worker owns the run, not the caller
    assert session_row(data, cid)[0] == "pending"

    # Follow-ups before Ready are refused, typed, and write nothing.
    for follow in (
        ("run", "--session", cid, "done yet?"),
        ("run", "--detached", "--session", cid, "done yet?"),
    ):
        refused = run_cli("--data-dir", str(data), *follow, home=tmp_path)
        assert refused.returncode == 1
        assert "session_not_ready" in refused.stderr
        assert "Traceback" not in refused.stderr
    tool = run_cli(
        "--data-dir",
        str(data),
        "tool",
        "delegate_agent",
        json.dumps({"conversation_id": cid, "prompt": "done yet?", "mode": "detached"}),
        home=tmp_path,
    )
    assert json.loads(tool.stdout)["error"]["code"] == "session_not_ready"
    assert query(data, "SELECT count(*) FROM runs") == [(1,)]

    gate.touch()
    finishes(data, run_id)
    assert run_row(data, run_id)[1] == "first half of the answer, then the rest"
    assert session_row(data, cid) == ("ready", "completed")
    again = run_cli("--data-dir", str(data), "run", "--session", cid, "go on", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "then the rest" in again.stdout
    assert session_row(data, cid) == ("ready", "completed")


def test_a_detached_follow_up_returns_at_once_and_holds_the_session(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, gate = gated
    first = detached(tmp_path, data, "--agent", "slow", "warm up")
    finishes(data, first["run_id"])
    cid = first["conversation_id"]
    answer = detached(tmp_path, data, "--agent", "gated", "--session", cid, "now wait")
    assert answer["conversation_id"] == cid
    assert answer["kind"] == "follow_up"
    assert session_row(data, cid)[0] == "running"
    busy = run_cli("--data-dir", str(data), "run", "--session", cid, "more", home=tmp_path)
    assert "agent_busy" in busy.stderr
    gate.touch()
    finishes(data, answer["run_id"])
    assert session_row(data, cid) == ("ready", "completed")


def test_the_plain_line_names_the_run_and_the_conversation(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, _ = gated
    result = run_cli(
        "--data-dir", str(data), "run", "--detached", "--agent", "slow", "hi", home=tmp_path
    )
    assert result.returncode == 0, result.stderr
    [(run_id, cid)] = query(data, "SELECT run_id, conversation_id FROM runs")
    assert run_id in result.stdout
    assert cid in result.stdout
    finishes(data, run_id)


# --- the run outlives its caller ------------------------------------------------------


def _caller_in_its_own_group(
    tmp_path: Path, data: Path, command: list[str]
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """``command`` then ``sleep``, in a process group of its own (a terminal's job).

    The caller stays alive after it answered, so a test can kill it (or Ctrl+C its
    group) right after the launch returned.
    """
    script = '"$@"; echo; exec sleep 60'
    proc = subprocess.Popen(
        ["sh", "-c", script, "sh", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=cli_env(tmp_path),
        start_new_session=True,
    )
    out = read_until(proc, b"}\n\n", timeout=60)
    return proc, json.loads(out.decode())


def _launch_command(data: Path) -> list[str]:
    return [
        str(DELEGATE),
        "--data-dir",
        str(data),
        "run",
        "--detached",
        "--json",
        "--agent",
        "gated",
        "explain",
    ]


def _tool_command(data: Path) -> list[str]:
    request = json.dumps({"prompt": "explain", "agent_id": "gated", "mode": "detached"})
    return [str(DELEGATE), "--data-dir", str(data), "tool", "delegate_agent", request]


@pytest.mark.parametrize("surface", ["run", "tool"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killing_or_interrupting_the_caller_changes_nothing_about_the_run(
    tmp_path: Path, gated: tuple[Path, Path], surface: str, sig: signal.Signals
) -> None:
    data, gate = gated
    command = _launch_command(data) if surface == "run" else _tool_command(data)
    caller, answer = _caller_in_its_own_group(tmp_path, data, command)
    try:
        os.killpg(caller.pid, sig)  # the whole job, as a terminal's Ctrl+C or a kill would
        caller.wait(timeout=20)
    finally:
        caller.kill()
    run_id, cid = answer["run_id"], answer["conversation_id"]
    assert run_row(data, run_id)[0] == "running"
    assert session_row(data, cid)[0] == "pending"
    gate.touch()
    finishes(data, run_id)
    assert session_row(data, cid) == ("ready", "completed")


CALLER = """
import asyncio, json, sys, time
from pathlib import Path
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

async def main():
    orch = await AgentOrchestrator.open(Path(sys.argv[1]))
    answer = await call_tool(orch, "delegate_agent", sys.argv[2])
    print(json.dumps(answer), flush=True)
    await asyncio.sleep(60)  # a long-lived caller (an MCP server, a primary agent)

asyncio.run(main())
"""


def test_a_long_lived_tool_caller_killed_after_the_answer_leaves_the_run_running(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, gate = gated
    request = json.dumps({"prompt": "explain", "agent_id": "gated", "mode": "detached"})
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER, str(data), request],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=cli_env(tmp_path),
    )
    try:
        answer = json.loads(read_until(caller, b"}\n", timeout=60))
        caller.kill()
        caller.wait(timeout=20)
    finally:
        caller.kill()
    assert answer["status"] == "ok", answer
    # Any reader now checks the run's owner: the worker, alive.
    listing = run_cli("--data-dir", str(data), "sessions", "list", "--json", home=tmp_path)
    assert [s["state"] for s in json.loads(listing.stdout)["sessions"]] == ["pending"]
    gate.touch()
    finishes(data, answer["run_id"])


# --- a detached launch that does not complete is not Ready ------------------------------


def test_a_failed_detached_launch_rests_idle_and_a_retry_is_accepted(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, _ = gated
    answer = detached(tmp_path, data, "--agent", "flaky", "please explode")
    finishes(data, answer["run_id"], "failed")
    cid = answer["conversation_id"]
    assert session_row(data, cid) == ("idle", "failed")
    retry = run_cli("--data-dir", str(data), "run", "--session", cid, "try again", home=tmp_path)
    assert retry.returncode == 0, retry.stderr
    assert session_row(data, cid) == ("ready", "completed")


def test_a_stopped_detached_launch_is_cancelled_and_rests_idle(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, _ = gated
    answer = detached(tmp_path, data, "--agent", "gated", "explain")
    stop = run_cli("--data-dir", str(data), "sessions", "stop", answer["run_id"], home=tmp_path)
    assert stop.returncode == 0, stop.stderr
    status, output, _ = run_row(data, answer["run_id"])
    assert status == "cancelled"
    assert output.startswith("first half of")  # the partial reply is kept
    assert session_row(data, answer["conversation_id"]) == ("idle", "cancelled")


def test_a_killed_worker_leaves_the_session_interrupted_and_idle(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, _ = gated
    answer = detached(tmp_path, data, "--agent", "gated", "explain")
    _, _, owner = run_row(data, answer["run_id"])
    assert owner is not None
    os.kill(owner, signal.SIGKILL)
    wait_for(lambda: owner not in worker_pids(data), "the worker to die")
    listing = run_cli("--data-dir", str(data), "sessions", "list", "--json", home=tmp_path)
    [session] = json.loads(listing.stdout)["sessions"]
    assert (session["state"], session["last_run_status"]) == ("idle", "interrupted")
    assert run_row(data, answer["run_id"])[0] == "interrupted"


# --- refusals are typed, write nothing, and leave no worker ------------------------------


def test_refusals_are_typed_and_start_no_worker(tmp_path: Path, gated: tuple[Path, Path]) -> None:
    data, _ = gated
    pending = detached(tmp_path, data, "--agent", "gated", "hold")
    before = query(data, "SELECT count(*) FROM runs")
    cases = [
        (("--agent", "nobody", "hi"), "unknown_agent"),
        (("--agent", "gated", "--cwd", str(tmp_path / "gone"), "hi"), "cwd_missing"),
        (("--session", "no-such-conversation", "hi"), "unknown_conversation"),
        (("--session=--json", "hi"), "unknown_conversation"),
        (("--session", pending["conversation_id"], "hi"), "session_not_ready"),
        (("--agent", "gated", "   "), "invalid_request"),
    ]
    for args, code in cases:
        result = run_cli(
            "--data-dir", str(data), "run", "--detached", "--json", *args, home=tmp_path
        )
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert json.loads(result.stdout)["error"]["code"] == code, args
        assert "Traceback" not in result.stderr
    assert query(data, "SELECT count(*) FROM runs") == before
    assert len(worker_pids(data)) == 1  # the held run's worker, nothing else


# --- the core API -------------------------------------------------------------------------


async def test_delegate_detached_returns_handles_that_follow_the_run_through_the_store(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, gate = gated
    orch = await AgentOrchestrator.open(data)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        [handle] = await orch.delegate("explain", agent_id="gated", mode="detached")
        assert loop.time() - started < RETURNS_WITHIN_S
        assert orch.running() == []  # this process drives nothing
        session = await orch.get_session(handle.conversation_id)
        assert session.state is SessionState.PENDING
        gate.touch()
        run = await asyncio.wait_for(handle.wait(), WAIT_S)
        assert run.status is RunStatus.COMPLETED
        assert run.output == "first half of the answer, then the rest"
        session = await orch.get_session(handle.conversation_id)
        assert session.state is SessionState.READY
    finally:
        await orch.close()


async def test_the_tool_answers_at_once_for_a_detached_launch(
    tmp_path: Path, gated: tuple[Path, Path]
) -> None:
    data, gate = gated
    orch = await AgentOrchestrator.open(data)
    try:
        answer = await delegate_agent(
            orch, {"prompt": "x", "agent_id": "gated", "mode": "detached"}
        )
        assert answer["status"] == "ok"
        assert answer["session_state"] == "pending"
        [(owner,)] = query(data, "SELECT owner_pid FROM runs")
        assert owner != os.getpid()
    finally:
        await orch.close()  # returns: nothing of this process to wait for
    gate.touch()
    finishes(data, answer["run_id"])
