"""The scale benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "cold index:",
    "list_sessions first page (limit 50):",
    "re-scan, nothing changed:",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_scale.py")
    lines: list[str] = []

    code = bench.main(["--smoke", "--work-dir", str(tmp_path / "bench")], out=lines.append)

    text = "\n".join(lines)
    assert code == 0, text
    assert "tree: built 2,100 files (2,000 sub-agents in 100 sessions)" in text
    for figure in FIGURES:
        assert any(ln.startswith(figure) for ln in lines), f"missing {figure!r} in:\n{text}"
    assert "-> BAD" not in text
    assert "2,000 sessions reachable" in text
    assert all("load " in ln for ln in lines if ln.startswith(tuple(FIGURES)))

    again: list[str] = []
    assert bench.main(["--smoke", "--work-dir", str(tmp_path / "bench")], out=again.append) == 0
    assert any(ln.startswith("tree: reusing 2,100 files") for ln in again)


def test_a_step_s_peak_memory_is_its_own_not_its_parent_s(tmp_path: Path) -> None:
    """Linux keeps a process's ``ru_maxrss`` across ``exec``: a step started by a big
    process (a test run) would report that process's peak as its own."""
    import subprocess
    import sys

    ballast = bytearray(300 * 1024 * 1024)  # this process's peak: over 300 MB
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched, so resident
    bench_dir = Path(__file__).resolve().parent
    probe = (
        f"import sys; sys.path.insert(0, {str(bench_dir)!r});"
        "from bench_loader import load_bench;"
        "print(load_bench('bench_scale.py')._rss_mb()[0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    del ballast
    assert float(done.stdout.strip().splitlines()[-1]) < 200, done.stdout
