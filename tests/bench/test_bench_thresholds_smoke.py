"""The thresholds benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "corpus indexed",
    "supervisor: transcripts watching",
    "append -> hand-off asked",
    "run closed in another process -> hand-off asked",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_thresholds.py")
    lines: list[str] = []

    code = bench.main(["--smoke", "--work-dir", str(tmp_path / "bench")], out=lines.append)

    text = "\n".join(lines)
    assert code == 0, text
    for figure in FIGURES:
        assert any(ln.startswith(figure) for ln in lines), f"missing {figure!r} in:\n{text}"
    assert "-> BAD" not in text
