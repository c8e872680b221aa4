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
