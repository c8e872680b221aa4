"""The detached-launch benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "cores (nproc):",
    "floor, delegate agents --json: p50",
    "delegate run --detached (returns): p50",
    "runs completed by their workers: 3 of 3",
    "result: p95",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_detached.py")
    lines: list[str] = []

    code = bench.main(["--smoke", "--work-dir", str(tmp_path / "bench")], out=lines.append)

    text = "\n".join(lines)
    assert code == 0, text
    for figure in FIGURES:
        assert any(ln.startswith(figure) for ln in lines), f"missing {figure!r} in:\n{text}"
