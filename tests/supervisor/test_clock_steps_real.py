"""A real ``delegate watch`` whose wall clock is stepped while a real ``delegate run`` runs:
the run is not interrupted, it completes and ``delegate run`` exits 0.

The watch's view of time is stepped with libfaketime (Debian's ``faketime``
package): an offset file it re-reads on every call, changed while it runs; its
monotonic clock is left alone, as a real step leaves it. Skipped where
libfaketime is not installed (CI installs it).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from gated import gated_data_dir, read_until, start_run
from support import query
from test_cli_watch import Watch

LIBFAKETIME = next(
    (
        p
        for p in (
            Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path("/usr/lib/faketime/libfaketimeMT.so.1"),
        )
        if p.is_file()
    ),
    None,
)

pytestmark = pytest.mark.skipif(
    LIBFAKETIME is None, reason="libfaketime is not installed (apt-get install faketime)"
)


def stepped_watch(data_dir: Path, offset_file: Path, *args: str) -> Watch:
    """``delegate watch`` whose wall clock reads the offset in ``offset_file``."""
    faked = {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(offset_file),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }
    return Watch(data_dir, *args, env=faked)


@pytest.mark.parametrize("step", ["+40", "+3600", "-7200"])
def test_a_real_watch_whose_clock_steps_leaves_a_live_run_alone(tmp_path: Path, step: str) -> None:
    data, gate = gated_data_dir(tmp_path)
    offset = tmp_path / "offset"
    offset.write_text("+0\n", encoding="ascii")
    empty = tmp_path / "none"
    empty.mkdir()
    watch = stepped_watch(
        data, offset, "--json", "--claude-dir", str(empty), "--codex-dir", str(empty)
    )
    run = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        assert watch.event("watch_status")["leader"] is True
        read_until(run, b"first half of ")
        offset.write_text(f"{step}\n", encoding="ascii")  # the watch's clock steps now
        time.sleep(4)  # the watch ticks every second: four looks at the run
        assert query(data, "SELECT status FROM runs") == [("running",)]
        gate.touch()
        assert run.wait(timeout=30) == 0, run.stderr.read() if run.stderr else ""
        assert query(data, "SELECT status FROM runs") == [("completed",)]
        assert watch.proc.poll() is None, "the stepped watch died"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=10)
        code = watch.stop(signal.SIGTERM)
    assert code == 0, watch.proc.stderr.read() if watch.proc.stderr else ""
