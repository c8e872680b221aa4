"""``delegate run`` ends at once on SIGINT, SIGTERM and SIGHUP.

The console script runs in a real subprocess against a gated scripted agent:
its reply stops half way until a file appears, so the run is in flight for
exactly as long as the test needs, with no timing involved.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from gated import gated_data_dir, read_until, start_run
from support import DELEGATE, cli_env, query


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
)
def test_a_signal_cancels_the_run_at_once_and_keeps_the_partial_reply(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        read_until(proc, b"first half of ")
        sent = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=20)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert not gate.exists()  # the run never got past the gate: it was cut short
    assert proc.returncode == code, stderr.decode()
    assert took < 5
    assert "Traceback" not in stderr.decode()
    [(status, output)] = query(data, "SELECT status, output FROM runs")
    assert status == "cancelled"
    assert output.startswith("first half of")
    [(state,)] = query(data, "SELECT state FROM sessions")
    assert state == "idle"
    # The partial reply is part of the conversation, so a follow-up sees it.
    contents = [c for (c,) in query(data, "SELECT content FROM messages WHERE role = 'assistant'")]
    assert len(contents) == 1
    assert contents[0].startswith("first half of")


def test_a_follow_up_after_a_cancelled_run_succeeds(tmp_path: Path) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        read_until(proc, b"first half of ")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    finally:
        proc.kill()
    [(cid,)] = query(data, "SELECT conversation_id FROM sessions")
    gate.touch()
    again = subprocess.run(
        [str(DELEGATE), "--data-dir", str(data), "run", "--session", cid, "go on"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert "then the rest" in again.stdout
