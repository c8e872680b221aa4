"""The import benchmark runs end to end at smoke size (timings are not asserted).

ccusage, the peer, is left out (``--no-peers``): CI does not install it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "cold import, first batch committed",
    "cold import, whole corpus",
    "delegate import (whole process), whole corpus",
    "every session listed from heads and tails (before the full read): in process",
    "ccusage daily --json --offline: could not measure: --no-peers",
    "CPU of the machine during each cold import (every process, p50): import_sources",
    "list_sessions first page (limit 50) after import",
    "warm re-scan, nothing changed",
    "preview last 20 of a 5 MB transcript",
    "preview, an older page of 20 via cursor",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_import.py")
    lines: list[str] = []

    code = bench.main(
        ["--smoke", "--no-peers", "--work-dir", str(tmp_path / "bench")], out=lines.append
    )

    text = "\n".join(lines)
    assert code == 0, text
    assert "corpus: built 26 files" in text  # 13 real main sessions x 2
    for figure in FIGURES:
        assert any(ln.startswith(figure) for ln in lines), f"missing {figure!r} in:\n{text}"
    assert "-> BAD" not in text
    assert "22 sessions" in text  # the zero-byte and summary-only copies make none
    assert text.count("load ") >= 4  # the load average beside the figures

    again: list[str] = []
    assert (
        bench.main(
            ["--smoke", "--no-peers", "--work-dir", str(tmp_path / "bench")], out=again.append
        )
        == 0
    )
    assert any(ln.startswith("corpus: reusing 26 files") for ln in again)
