"""``delegate runs list|show|stop`` through ``tui.cli.main``, on a run another process drives."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gated import gated_data_dir, read_until, start_run
from support import query

from tui.cli import main


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A ``delegate run`` in another process, its gated run in flight."""
    data, _gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        read_until(proc, b"first half of ")
        yield data, proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    return code, json.loads(capsys.readouterr().out)


def test_runs_list_show_and_stop_a_run_of_another_process(
    owner: tuple[Path, subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    data, proc = owner
    d = ("--data-dir", str(data))
    [(run_id, cid)] = query(data, "SELECT run_id, conversation_id FROM runs")

    code, listed = cli_json(capsys, *d, "runs", "list", "--status", "running", "--json")
    assert code == 0
    [row] = listed["runs"]
    assert (row["run_id"], row["conversation_id"], row["status"]) == (run_id, cid, "running")
    assert (row["agent_id"], row["owner_kind"], row["kind"]) == ("gated", "run", "launch")
    assert row["finished_at"] is None
    assert row["duration_s"] >= 0

    deadline = time.monotonic() + 20
    while True:  # the owner stores its live output (throttled) while the run goes on
        code, shown = cli_json(capsys, *d, "runs", "show", run_id[:8], "--json")
        assert code == 0
        if (shown["run"]["live_output"] or "").startswith("first half of"):
            break
        assert time.monotonic() < deadline, shown
        time.sleep(0.05)
    run = shown["run"]
    assert (run["run_id"], run["prompt"], run["status"]) == (run_id, "explain the build", "running")
    assert run["owner_kind"] == "run"
    assert run["owner_pid"] == proc.pid
    assert run["heartbeat_at"] is not None
    assert run["cancel_requested"] is False

    code, stopped = cli_json(capsys, *d, "runs", "stop", run_id, "--json")
    assert code == 0
    assert (stopped["how"], stopped["run_id"], stopped["conversation_id"]) == (
        "stopped",
        run_id,
        cid,
    )
    proc.wait(timeout=20)

    code, listed = cli_json(capsys, *d, "runs", "list", "--status", "running", "--json")
    assert listed == {"runs": []}
    code, shown = cli_json(capsys, *d, "runs", "show", run_id, "--json")
    assert shown["run"]["status"] == "cancelled"
    assert shown["run"]["cancel_requested"] is True
    assert shown["run"]["output"].startswith("first half of")

    assert main([*d, "runs", "list", "--plain"]) == 0
    plain = capsys.readouterr().out.splitlines()
    assert plain[0].split("\t") == ["run", "status", "agent", "session", "age", "duration"]
    assert plain[1].split("\t")[:4] == [run_id, "cancelled", "gated", cid]
    assert main([*d, "runs", "show", run_id]) == 0
    text = capsys.readouterr().out
    assert "explain the build" in text
    assert "owner run" in text
    assert "stop requested" in text


def test_runs_errors_are_typed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, gate = gated_data_dir(tmp_path)
    d = ("--data-dir", str(data))
    code, err = cli_json(capsys, *d, "runs", "show", "no-such-run", "--json")
    assert (code, err["error"]["code"]) == (1, "unknown_run")
    code, err = cli_json(capsys, *d, "runs", "list", "--limit", "0", "--json")
    assert (code, err["error"]["code"]) == (1, "invalid_request")
    gate.touch()
    assert main([*d, "run", "--agent", "gated", "quick"]) == 0
    capsys.readouterr()
    [(run_id,)] = query(data, "SELECT run_id FROM runs")
    code, err = cli_json(capsys, *d, "runs", "stop", run_id, "--json")
    assert (code, err["error"]["code"]) == (1, "not_running")
    assert main([*d, "runs", "stop", "no-such-run"]) == 1
    assert "unknown_run" in capsys.readouterr().err


def test_a_detached_run_is_a_worker_s_and_runs_stop_reaches_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, gate = gated_data_dir(tmp_path)
    d = ("--data-dir", str(data))
    try:
        code, answer = cli_json(
            capsys, *d, "run", "--detached", "--json", "--agent", "gated", "explain"
        )
        assert code == 0
        run_id = answer["run_id"]
        code, shown = cli_json(capsys, *d, "runs", "show", run_id, "--json")
        assert shown["run"]["owner_kind"] == "worker"  # recorded by the caller for its worker
        code, stopped = cli_json(capsys, *d, "runs", "stop", run_id, "--json")
        assert (code, stopped["how"]) == (0, "stopped")
        assert query(data, "SELECT status FROM runs") == [("cancelled",)]
    finally:
        gate.touch()
