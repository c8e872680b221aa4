"""Processes that meet a store nobody has created yet all open it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

OPENER = """
import asyncio, os, sys, time
from pathlib import Path
from core.store import Store
start = Path(sys.argv[2])
while not start.exists():
    time.sleep(0.0005)
async def main() -> None:
    store = await Store.open(Path(sys.argv[1]))
    await store.close()
asyncio.run(main())
"""


def test_processes_creating_one_store_at_once_all_open_it(tmp_path: Path) -> None:
    """A ``watch`` and a ``run`` started together on a new data folder: neither fails
    (neither at creating the file nor at making it WAL and migrating it)."""
    root = Path(__file__).resolve().parents[2]
    failures: list[str] = []
    for round_ in range(10):
        folder = tmp_path / str(round_)
        start = tmp_path / f"start{round_}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, str(folder / "store.sqlite3"), str(start)],
                cwd=root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(6)
        ]
        time.sleep(1.0)  # every opener imported and waiting
        start.touch()
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                failures.append(err.decode(errors="replace"))
    assert failures == []
