"""The compact-returns benchmark runs end to end at smoke size (figures, not asserted)."""

from __future__ import annotations

import pytest
from bench_loader import load_bench

# Figures, not assertions of size: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench


def test_smoke_benchmark_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("bench_returns.py")
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "full text (today)" in out
    assert "compact, a call per role" in out
    assert "compact, chain (per step)" in out
