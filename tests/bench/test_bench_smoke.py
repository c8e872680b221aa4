"""The core benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "list_sessions first page, limit 20",
    "list_sessions first page, limit 3",
    "list_sessions page 99 via cursor, limit 20",
    "recent_messages last 20 of 5,000",
    "recent_messages older 20",
    "CLI `sessions list --json`, bytecode cached",
    "CLI `sessions list --json`, env as is",
    "`python -c pass`",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_core.py")
    lines: list[str] = []

    code = bench.main(
        ["--smoke", "--data-dir", str(tmp_path / "bench"), "--iterations", "20"],
        out=lines.append,
    )

    text = "\n".join(lines)
    assert code == 0, text
    assert "store: building 2,000 sessions / 40,000 messages" in text
    for figure in FIGURES:
        line = next((ln for ln in lines if ln.startswith(figure)), None)
        assert line is not None, f"missing figure {figure!r} in:\n{text}"
        assert " p50 " in line, line
        assert " p95 " in line, line
    # Structural checks, not timings: the pages walk indexes, the CLI stays light.
    assert text.count("plan  ") == 4, text
    assert "-> BAD" not in text, text
    assert "query plans use indexes" in text, text
    assert "no heavy imports" in text, text


def test_rerun_reuses_the_built_store(tmp_path: Path) -> None:
    bench = load_bench("bench_core.py")
    args = ["--sessions", "60", "--messages", "1200", "--big-conversation", "300"]
    args += ["--data-dir", str(tmp_path / "bench"), "--iterations", "2", "--cli-runs", "1"]
    first: list[str] = []
    second: list[str] = []

    assert bench.main(args, out=first.append) == 0
    assert bench.main(args, out=second.append) == 0

    assert any(ln.startswith("store: building 60 sessions") for ln in first)
    assert any(ln.startswith("store: reusing") for ln in second)
