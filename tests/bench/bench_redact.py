"""Benchmark of redaction: what masking secrets costs per imported text.

Every string of every real transcript in ``tests/fixtures/realdata`` (message
texts, tool inputs and outputs, metadata: about 55,000 strings, 6 MB) goes
through :func:`core.redact.redact`, as the importers and the search index do for
every prompt and reply. Prints the median of a few rounds: total time, time per
text and throughput, and how many texts were changed (0 expected: the real
transcripts hold no secrets).

Usage::

    uv run python tests/bench/bench_redact.py            # 5 rounds
    uv run python tests/bench/bench_redact.py --rounds 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.redact import redact  # noqa: E402

REALDATA = ROOT / "tests" / "fixtures" / "realdata"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def transcript_texts(root: Path = REALDATA) -> list[str]:
    """Every string value of every JSON line of every transcript under ``root``."""
    texts: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                texts.extend(_strings(json.loads(raw)))
            except ValueError:
                continue
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    texts = transcript_texts()
    size = sum(len(t) for t in texts)
    samples = []
    changed = 0
    for _ in range(args.rounds):
        started = time.perf_counter()
        changed = sum(redact(t) != t for t in texts)
        samples.append(time.perf_counter() - started)
    best = statistics.median(samples)
    print(
        f"redact: {len(texts)} texts, {size / 1e6:.1f} M characters:"
        f" {best * 1000:.0f} ms (median of {args.rounds}),"
        f" {best / len(texts) * 1e6:.1f} µs a text, {size / best / 1e6:.0f} M chars/s;"
        f" {changed} changed"
    )
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
