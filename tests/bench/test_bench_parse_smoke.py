"""The parse benchmark runs end to end in one round (timings are not asserted).

msgspec is not a dependency: without it the benchmark prints the figures that
need only orjson, and says nothing of the decoders it could not load.
"""

from __future__ import annotations

import pytest
from bench_loader import load_bench

# Figures, not assertions of speed: out of the default run (`pytest --run-bench`).
pytestmark = pytest.mark.bench

SECTIONS = [
    "the parse, step by step",
    "decoders alone, every line",
    "Claude Code lines alone",
    "the floor of reading every line in Python",
    "the worker's loop (split, decode, facts, texts)",
]
FIGURES = [
    "parse_file (what a worker runs)",
    "orjson -> dicts",
    "bytes.split + orjson, dropped",
    "every line: decode, facts, texts",
    "an oracle's pre-filter in front",
    "orjson, every line a dict",
]


def test_smoke_benchmark_prints_every_figure() -> None:
    bench = load_bench("bench_parse.py")
    lines: list[str] = []

    code = bench.main(["--rounds", "1", "--corpus-bytes", "2e9", "--goal-s", "3"], out=lines.append)

    text = "\n".join(lines)
    assert code == 0, text
    assert lines[0].startswith("13 transcripts")  # the real main sessions the corpus copies
    for section in SECTIONS:
        assert any(ln.startswith(section) and "load " in ln for ln in lines), text
    for figure in FIGURES:
        assert any(ln.strip().startswith(figure) for ln in lines), f"missing {figure!r}:\n{text}"
    floor = [ln for ln in lines if ln.strip().startswith("bytes.split")]
    assert len(floor) >= 2, text
    assert all(ln.endswith("s CPU for the corpus") for ln in floor), text
    assert "(2.00 GB): 3.0 s on" in text  # the budget follows the options given
    assert "-> BAD" not in text
