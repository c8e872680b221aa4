"""The picker benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "first page: app start -> first frame with rows",
    "first page: app start -> SessionList.Loaded handled",
    "cursor move: key -> frame, first 40 moves",
    "cursor move: key -> frame, all 60 moves",
    "cursor move: key -> preview frame, all 60",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_tui.py")
    lines: list[str] = []

    # Smoke size (2,000 sessions), fewer starts and rows than --smoke alone, for CI time.
    args = ["--smoke", "--data-dir", str(tmp_path / "bench"), "--starts", "2"]
    code = bench.main([*args, "--rows", "60", "--moves", "40"], out=lines.append)

    text = "\n".join(lines)
    assert code == 0, text
    assert any(ln.startswith("store: building 2,000 sessions") for ln in lines), text
    assert any(ln.startswith("first page: cold first run") for ln in lines), text
    for figure in FIGURES:
        line = next((ln for ln in lines if ln.startswith(figure)), None)
        assert line is not None, f"missing figure {figure!r} in:\n{text}"
        assert " p50 " in line, line
        assert " p95 " in line, line
    # The list really moved 60 rows down, loading the pages after the first.
    assert "scroll: moved down 60 rows to row 60;" in text, text
    memory = next(
        (ln for ln in lines if ln.startswith("memory: VmRSS after scrolling 60 rows")), ""
    )
    assert " MB " in memory, text
    assert any(ln.startswith("result: ") for ln in lines), text
