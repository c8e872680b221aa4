"""Benchmark of redaction: what masking secrets costs per imported text.

Two sets of texts from the real transcripts in ``tests/fixtures/realdata`` go
through :func:`core.redact.redact`: every string of every line (message texts,
tool inputs and outputs, metadata: about 55,000 strings, 4.6 M characters; what
pages, previews and tools may show), and the prompts and replies the importers
index (each redacted once per import). Prints the best of a few rounds in CPU
seconds (a busy machine slows the wall clock, not the work): total, per text,
throughput, and how many texts were changed (0 expected: the real transcripts
hold no secrets).

Usage::

    uv run python tests/bench/bench_redact.py            # best of 5 rounds
    uv run python tests/bench/bench_redact.py --rounds 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for entry in (ROOT, ROOT / "tests"):  # run as a script: core, and the shared corpus
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from secrets_corpus import REALDATA, realdata_strings  # noqa: E402

from core.redact import redact  # noqa: E402
from core.sources import claude  # noqa: E402
from core.sources.texts import extractor  # noqa: E402


def transcript_texts(root: Path = REALDATA) -> list[str]:
    """Every string value of every JSON line of every transcript under ``root``."""
    return [text for _, text in realdata_strings(root)]


def indexed_texts(root: Path = REALDATA) -> list[str]:
    """The prompts and replies the importers index (and redact) from each transcript.

    The extractor returns them already redacted; the real transcripts hold no
    secret (this benchmark checks it), so they are the texts as written.
    """
    texts: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        source = claude.SOURCE if "claude" in path.parts else "codex"
        extract = extractor(source)
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            found = extract(line) if isinstance(line, dict) else None
            if found is not None:
                texts.append(found[2])
    return texts


def _measure(name: str, texts: list[str], rounds: int) -> int:
    """Prints the figure for ``texts``; returns how many redaction changed."""
    size = sum(len(t) for t in texts)
    samples = []
    changed = 0
    for _ in range(rounds):
        started = time.process_time()
        changed = sum(redact(t) != t for t in texts)
        samples.append(time.process_time() - started)
    best = min(samples)
    print(
        f"{name}: {len(texts)} texts, {size / 1e6:.1f} M characters:"
        f" {best * 1000:.0f} ms CPU (best of {rounds}),"
        f" {best / len(texts) * 1e6:.1f} µs a text, {size / best / 1e6:.0f} M chars/s;"
        f" {changed} changed"
    )
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    changed = _measure("every string", transcript_texts(), args.rounds)
    changed += _measure("indexed prompts and replies", indexed_texts(), args.rounds)
    return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
