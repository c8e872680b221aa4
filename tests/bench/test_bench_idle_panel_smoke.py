"""The idle-panel benchmark runs end to end with a short window (the figure is not asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

BENCH = Path(__file__).with_name("bench_idle_panel.py")


def test_smoke_benchmark_prints_the_figure() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--seconds", "2", "--settle", "1", "--sessions", "20"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "idle panel:" in result.stdout
    assert "of one core" in result.stdout
    assert "result:" in result.stdout
