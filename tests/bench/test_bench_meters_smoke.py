"""The token-counting-on-store benchmark runs end to end at smoke size (timings not asserted)."""

from __future__ import annotations

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench


def test_smoke_benchmark_prints_every_size_and_mode(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("bench_meters.py")
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    for name in bench.texts():
        assert name in out
    for mode in bench.MODES:
        assert mode in out
