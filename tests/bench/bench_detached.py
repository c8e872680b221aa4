"""Benchmark of ``delegate run --detached`` returning at once.

Times the console script as a user runs it, a real process each time: from just
before ``subprocess.run([delegate, --data-dir, D, run, --detached, --agent,
echo, PROMPT])`` until it has exited (its answer printed). The run itself goes
on in its worker process; before the next launch the benchmark waits until
every run is stored closed and its worker has exited, so each launch is
measured on a machine that is not also busy with the previous run's worker
(and every run is checked to have completed). The floor is the same console
script doing next to nothing
(``delegate agents --json``: interpreter, imports, settings).

Prints p50 / p95 / max of each and ``result: ... -> OK`` when p95 < 1 s.

Usage::

    uv run python tests/bench/bench_detached.py              # 50 launches
    uv run python tests/bench/bench_detached.py --launches 200
    uv run python tests/bench/bench_detached.py --smoke      # 3 launches (CI)
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

DELEGATE = Path(sys.executable).parent / "delegate"
TARGET_P95_S = 1.0
WAIT_S = 60.0  # every wait is bounded
Out = Callable[[str], None]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DELEGATE_HOME"}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "xdg-data"))
    return env


def _timed(argv: Sequence[str], home: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        argv, capture_output=True, text=True, cwd=home, env=_env(home), timeout=WAIT_S, check=False
    )
    took = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-3:])} failed: {result.stderr.strip()}")
    return took


def _runs_open(data: Path) -> int:
    with sqlite3.connect(data / "delegate.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0])


def _workers(data: Path) -> int:
    """Worker processes of this data folder still alive (their command line names it)."""
    wanted = f"--data-dir={data.resolve()}".encode()
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        count += b"core.detached_worker" in argv and wanted in argv
    return count


def _wait_closed(data: Path) -> None:
    """Until every run is stored closed and its worker has exited (a quiet machine)."""
    deadline = time.monotonic() + WAIT_S
    while _runs_open(data) or (Path("/proc").is_dir() and _workers(data)):
        if time.monotonic() > deadline:
            raise RuntimeError("a detached run never closed")
        time.sleep(0.02)


def _summary(name: str, samples: list[float]) -> tuple[str, float]:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    line = (
        f"{name}: p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms,"
        f" max {ordered[-1] * 1000:.0f} ms over {len(ordered)}"
    )
    return line, p95


def measure(work: Path, launches: int, out: Out) -> bool:
    data = work / "data"
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    base = [str(DELEGATE), "--data-dir", str(data)]
    _timed([*base, "agents", "--json"], work)  # creates the store: not measured
    floor = [_timed([*base, "agents", "--json"], work) for _ in range(launches)]
    detached = []
    for index in range(launches):
        prompt = f"background job {index}"
        detached.append(_timed([*base, "run", "--detached", "--agent", "echo", prompt], work))
        _wait_closed(data)
    with sqlite3.connect(data / "delegate.sqlite3") as db:
        completed = db.execute("SELECT count(*) FROM runs WHERE status = 'completed'").fetchone()[0]
    out(f"cores (nproc): {os.cpu_count()}")
    floor_line, _ = _summary("floor, delegate agents --json", floor)
    out(floor_line)
    line, p95 = _summary("delegate run --detached (returns)", detached)
    out(line)
    out(f"runs completed by their workers: {completed} of {launches}")
    ok = p95 < TARGET_P95_S and completed == launches
    verdict = "OK" if ok else "BAD"
    out(f"result: p95 {p95 * 1000:.0f} ms (target < {TARGET_P95_S * 1000:.0f} ms) -> {verdict}")
    return ok


def main(argv: Sequence[str] | None = None, out: Out = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--launches", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="3 launches (CI)")
    parser.add_argument("--work-dir", type=Path, help="keep the data folder here")
    args = parser.parse_args(argv)
    launches = 3 if args.smoke else args.launches
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        measure(args.work_dir, launches, out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        measure(Path(tmp), launches, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
