"""The token-counting benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench


def test_smoke_benchmark_prints_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("bench_tokens.py")
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    for case in bench.cases(1000):
        assert case in out
    assert "≈" in out  # the 1 MB cases are estimated
