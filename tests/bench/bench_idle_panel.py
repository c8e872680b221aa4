"""Benchmark: the CPU an idle panel uses (the budget: < 1% of a core).

Runs the real panel (``delegate --data-dir D``, the console script) in its own
process on a pseudo-terminal (160x48), over a store of demo sessions, with
``HOME`` a temp folder whose ``.claude`` and ``.codex`` hold the real transcripts
of ``tests/fixtures/realdata`` (so the embedded supervisor watches them and its
leader runs its monitors). The screen output is read and thrown away, as a
terminal would. Once the panel has shown its first rows and finished its start
(``--settle`` seconds), nothing is pressed for ``--seconds`` seconds and the CPU
time the process used over that window (user + system, from ``/proc``, every
thread; children included) is divided by the wall time: the share of one core.

Usage::

    uv run python tests/bench/bench_idle_panel.py               # 60 s idle window
    uv run python tests/bench/bench_idle_panel.py --seconds 5   # smoke
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REALDATA = REPO / "tests" / "fixtures" / "realdata"
DELEGATE = Path(sys.executable).parent / "delegate"
COLUMNS, ROWS = 160, 48
TARGET_SHARE = 0.01  # of one core
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and of its children still running (from /proc)."""
    total = 0.0
    for p in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        # After the name: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in map(int, kids):
            found += [kid, *children(kid)]
    return found


def prepare(work: Path, sessions: int) -> tuple[Path, Path]:
    """A data folder with ``sessions`` demo sessions and a home holding real transcripts."""
    home, data = work / "home", work / "data"
    home.mkdir()
    shutil.copytree(REALDATA / "claude", home / ".claude")
    shutil.copytree(REALDATA / "codex", home / ".codex")
    subprocess.run(
        [DELEGATE, "--data-dir", str(data), "demo", "--sessions", str(sessions)],
        env=env_for(home),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return home, data


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    return env | {"HOME": str(home), "TERM": "xterm-256color", "COLUMNS": str(COLUMNS)}


def drain(master: int, until: float, seen: bytearray | None = None) -> None:
    """Read (and drop) what the panel writes until ``until`` (monotonic)."""
    while (left := until - time.monotonic()) > 0:
        ready, _, _ = select.select([master], [], [], min(left, 0.5))
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return  # the panel exited
            if seen is not None:
                seen += chunk


def measure(home: Path, data: Path, settle: float, seconds: float) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the idle panel over the window."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    panel = subprocess.Popen(
        [DELEGATE, "--data-dir", str(data)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env_for(home),
        start_new_session=True,
    )
    os.close(slave)
    try:
        seen = bytearray()
        deadline = time.monotonic() + 60
        while b"reusable" not in seen:  # the status line: the picker is up
            if time.monotonic() > deadline or panel.poll() is not None:
                raise SystemExit(f"the panel did not start: {bytes(seen[-400:])!r}")
            drain(master, time.monotonic() + 0.2, seen)
        drain(master, time.monotonic() + settle)  # the start import, first rescans
        cpu0, wall0 = cpu_seconds(panel.pid), time.monotonic()
        drain(master, wall0 + seconds)
        cpu1, wall1 = cpu_seconds(panel.pid), time.monotonic()
        if panel.poll() is not None:
            raise SystemExit("the panel exited during the window")
        return cpu1 - cpu0, wall1 - wall0
    finally:
        os.killpg(panel.pid, signal.SIGTERM)
        try:
            panel.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(panel.pid, signal.SIGKILL)
            panel.wait()
        os.close(master)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="idle window")
    parser.add_argument("--settle", type=float, default=10.0, help="wait after the first frame")
    parser.add_argument("--sessions", type=int, default=200, help="demo sessions in the store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="idle-panel-") as tmp:
        home, data = prepare(Path(tmp), args.sessions)
        cpu, wall = measure(home, data, args.settle, args.seconds)
    share = cpu / wall
    print(f"nproc: {os.cpu_count()}")
    print(f"idle panel: {cpu:.2f} s CPU over {wall:.1f} s = {share:.2%} of one core")
    verdict = "within" if share < TARGET_SHARE else "OVER"
    print(f"result: {verdict} the target (< {TARGET_SHARE:.0%} of one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
