"""The startup benchmark runs end to end at smoke size (timings are not asserted).

Peers (codex, claude, ccusage) are left out: they are not installed in CI.
The tmux figures run when tmux is there; otherwise they say why not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

FIGURES = [
    "cold start, first rows on screen",
    "cold start, whole corpus indexed",
    "cold start, every session listed",
    "ccusage daily --json --offline: could not measure: --no-peers",
    "cold import report",
    "cold start, first row shown is the newest session of the corpus",
    "bare Textual floor (DataTable, 50 rows), first rows on screen",
    "warm start, first rows on screen",
    "warm re-scan at start, nothing changed",
    "warm re-scan, import_sources alone",
    "sessions reachable by paging list_sessions to the end: 22 of 22",
    "tmux, delegate cold (uv run delegate)",
    "tmux, delegate warm (uv run delegate)",
    "tmux, delegate warm (.venv/bin/delegate)",
    "tmux, delegate warm (.venv/bin/delegate), the panel's first frame (over its first page)",
    "tmux, delegate warm without its kept first page (.venv/bin/delegate)",
    "tmux, bare Textual floor (uv run python)",
    "tmux, bare Textual floor (.venv/bin/python)",
    "tmux, codex resume --all, cold: could not measure",
    "tmux, codex resume --all, warm: could not measure",
    "tmux, claude --resume: could not measure",
    "result:",
]


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = load_bench("bench_startup.py")
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
    # The load average beside each figure; the floor's ratio beside ours.
    assert all("load " in ln for ln in lines if ln.startswith(("cold start, whole", "warm start")))
    assert "of the floor" in text
