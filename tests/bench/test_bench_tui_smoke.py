"""The picker benchmark runs end to end at smoke size (timings are not asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).with_name("bench_tui.py")

FIGURES = [
    "first page: app start -> first frame with rows",
    "first page: app start -> SessionList.Loaded handled",
    "cursor move: key -> frame, first 40 moves",
    "cursor move: key -> frame, all 60 moves",
    "cursor move: key -> preview frame, all 60",
]


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_tui", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_smoke_benchmark_prints_every_figure(tmp_path: Path) -> None:
    bench = _load_bench()
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
