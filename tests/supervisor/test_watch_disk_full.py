"""``delegate watch`` when its disk fills while it runs: one ``disk_full`` line on stderr
naming the folder (no traceback), it goes on, and leads again once space is freed.

The data folder is on a small tmpfs the test fills (root only; skipped otherwise).
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from full_disk import small_disk
from support import DELEGATE, cli_env, run_cli


def _wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_watch_whose_disk_fills_says_disk_full_once_and_leads_again(tmp_path: Path) -> None:
    with small_disk(tmp_path / "mnt", "8m") as disk:
        if isinstance(disk, str):
            pytest.skip(disk)
        data = disk.root / "data"
        home = tmp_path / "home"
        home.mkdir()
        seeded = run_cli("--data-dir", str(data), "demo", "--sessions", "5", home=home)
        assert seeded.returncode == 0, seeded.stderr
        out, err = tmp_path / "out.txt", tmp_path / "err.txt"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            watch = subprocess.Popen(
                [str(DELEGATE), "--data-dir", str(data), "watch", "--no-transcripts"],
                stdout=stdout,
                stderr=stderr,
                cwd=home,
                env=cli_env(home),
            )
            try:
                _wait_for(lambda: "leader" in out.read_text(), 30, "the watch to lead")
                disk.fill()
                _wait_for(lambda: "disk_full" in err.read_text(), 30, "the disk_full line")
                _wait_for(lambda: "follower" in out.read_text(), 30, "the watch to stop leading")
                time.sleep(2.5)  # more ticks on the full disk: the line is not repeated
                disk.free()
                _wait_for(
                    lambda: out.read_text().count("leader") >= 2, 30, "the watch to lead again"
                )
            finally:
                watch.send_signal(signal.SIGINT)
                code = watch.wait(30)
        said = err.read_text()
        assert code == 0, said
        assert "Traceback" not in said
        lines = [line for line in said.splitlines() if "disk_full" in line]
        assert lines
        assert len(lines) == len(set(lines))  # each problem said once
        assert any(f"free space in {data} and retry" in line for line in lines)
