"""A gated scripted agent and a ``delegate run`` in a subprocess (shared by the run tests).

The agent's reply stops half way until a file appears, so a run stays in
flight for exactly as long as a test needs, with no timing involved.
"""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from support import DELEGATE, cli_env, db_path, write_config

GATED_SCRIPT = """
[[rules]]
match = "."
reply = "first half of the answer, then the rest"
gate = "{gate}"
gate_after = 4
"""


def gated_data_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder with a ``gated`` agent, and the gate file that releases it."""
    gate = tmp_path / "go"
    script = tmp_path / "gated.toml"
    script.write_text(GATED_SCRIPT.format(gate=gate), encoding="utf-8")
    data = write_config(
        tmp_path / "data", f'\n[agents.gated]\nrunner = "scripted"\nscript = "{script}"\n'
    )
    return data, gate


def start_run(tmp_path: Path, data: Path, *args: str) -> subprocess.Popen[bytes]:
    """``delegate run ARGS`` in the background, its output on pipes."""
    return subprocess.Popen(
        [str(DELEGATE), "--data-dir", str(data), "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=cli_env(tmp_path),
    )


OWNER = Path(__file__).parent / "run_owner.py"


def start_owner(
    tmp_path: Path, data: Path, kind: str, heartbeat_s: float, prompt: str = "explain the build"
) -> subprocess.Popen[bytes]:
    """A second process owning one ``gated`` run, with this owner kind and heartbeat
    (see run_owner.py); it prints ``started RUN_ID`` once the run is in flight."""
    return subprocess.Popen(
        [sys.executable, str(OWNER), str(data), kind, str(heartbeat_s), "gated", prompt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=cli_env(tmp_path),
    )


def read_until(proc: subprocess.Popen[bytes], text: bytes, timeout: float = 30) -> bytes:
    """Standard output up to and including ``text`` (the run is then in flight)."""
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    while text not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"never printed {text!r}; got {seen!r}"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, f"stdout closed early; got {seen!r}"
            seen += chunk
    return seen


def stop_between_writes(proc: subprocess.Popen[bytes], data: Path, attempts: int = 100) -> None:
    """SIGSTOP ``proc`` at a moment it holds no write transaction on the store.

    A hung owner stopped inside a write would hold SQLite's write lock and block
    every writer: a different failure from the silent owner a test wants.
    """
    for _ in range(attempts):
        os.kill(proc.pid, signal.SIGSTOP)
        db = sqlite3.connect(db_path(data), timeout=0.5)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.rollback()
            return
        except sqlite3.OperationalError:  # stopped mid-write: let it finish, try again
            os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.01)
        finally:
            db.close()
    raise AssertionError("the owner always held the write lock")
