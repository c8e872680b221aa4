"""Benchmark of full-content search (type to search everything).

On the import benchmark's corpus (tests/bench/bench_import.py: every real main
session of ``tests/fixtures/realdata`` copied K times, K=300: 3,900 files,
1.65 GB) it measures:

- cold import into an empty store with the search index and without it
  (``import_sources(..., search_text=False)`` into a store whose search
  triggers are dropped, so titles are not indexed either), alternated ``--rounds`` times so
  the load of the machine hits both alike; the median of each, and what the
  index adds (target < 20%);
- the index's size: its rows, the text they hold, and the pages of
  ``search_docs``, its index and the FTS5 tables (``dbstat``, else the file
  size difference);
- the first page of results (limit 20, snippets included) through
  ``AgentOrchestrator.search_sessions``, p50/p95 over ``--queries`` runs each,
  for a word, a rare word, a phrase, a prefix and a filtered query
  (target < 50 ms p95 for a word and a phrase).

Usage::

    uv run python tests/bench/bench_search.py --work-dir /tmp/ibench   # K=300
    uv run python tests/bench/bench_search.py --smoke                  # seconds, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `core` importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import build_corpus  # noqa: E402

from core.importing.importer import import_sources  # noqa: E402
from core.orchestrator import AgentOrchestrator  # noqa: E402

Out = Callable[[str], None]
QUERIES = {
    "word": "test",
    "rare word": "hatchling",
    "phrase": '"the file"',
    "prefix": "impl*",
    "word + filters": "test agent:claude state:idle",
}
TARGETS = {"word": 0.050, "phrase": 0.050}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


async def _without_search(orch: AgentOrchestrator) -> None:
    """The baseline store indexes nothing: its search triggers are dropped."""
    triggers = await orch.store.db.fetch_all(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search%'"
    )
    async with orch.store.db.transaction() as db:
        for row in triggers:
            await db.execute(f'DROP TRIGGER "{row["name"]}"')


async def _cold_import(
    work: Path, name: str, claude: Path, codex: Path, text: bool, workers: int | None = None
) -> tuple[float, float]:
    """Wall time and this process's CPU time (all of it with ``workers=0``) of a cold import."""
    data_dir = work / name
    shutil.rmtree(data_dir, ignore_errors=True)
    orch = await AgentOrchestrator.open(data_dir)
    try:
        if not text:
            await _without_search(orch)
        started, cpu = time.perf_counter(), time.process_time()
        await import_sources(orch.store, claude, codex, search_text=text, workers=workers)
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        await orch.close()


async def _index_size(orch: AgentOrchestrator) -> tuple[int, int, int | None]:
    """Rows, bytes of text, and bytes of pages the index takes (None without dbstat)."""
    db = orch.store.db
    row = await db.fetch_one("SELECT count(*) AS n, total(length(body)) AS b FROM search_docs")
    assert row is not None
    try:
        pages = await db.fetch_one(
            "SELECT sum(pgsize) AS size FROM dbstat WHERE name LIKE 'search%'"
        )
        size = int(pages["size"]) if pages is not None and pages["size"] is not None else None
    except Exception:  # dbstat is compiled in most builds, not all
        size = None
    return int(row["n"]), int(row["b"]), size


async def run(work: Path, copies: int, rounds: int, queries: int, out: Out) -> int:
    out(f"machine: {os.cpu_count()} cores (nproc), Python {sys.version.split()[0]}")
    build_corpus(work / "corpus", copies, out)
    claude, codex = work / "corpus" / "claude", work / "corpus" / "codex"

    with_index: list[float] = []
    without: list[float] = []
    cpu_with: list[float] = []
    cpu_without: list[float] = []
    for _ in range(rounds):
        without.append((await _cold_import(work, "store-plain", claude, codex, text=False))[0])
        with_index.append((await _cold_import(work, "store", claude, codex, text=True))[0])
        # In one process the CPU time is all the work: a figure the machine's load moves less.
        cpu_without.append((await _cold_import(work, "cpu", claude, codex, False, 0))[1])
        cpu_with.append((await _cold_import(work, "cpu", claude, codex, True, 0))[1])
    plain_s, indexed_s = statistics.median(without), statistics.median(with_index)
    added = indexed_s / plain_s - 1
    cpu_added = statistics.median(cpu_with) / statistics.median(cpu_without) - 1
    out(
        f"cold import without the search index: median {plain_s:.2f} s"
        f" (runs: {', '.join(f'{s:.2f}' for s in without)})"
    )
    out(
        f"cold import with the search index: median {indexed_s:.2f} s"
        f" (runs: {', '.join(f'{s:.2f}' for s in with_index)})"
    )
    out(f"time the index adds to a cold import: {added * 100:+.1f}% (target < 20%)")
    out(
        f"CPU time of a cold import in one process: {statistics.median(cpu_without):.2f} s"
        f" without the index, {statistics.median(cpu_with):.2f} s with:"
        f" {cpu_added * 100:+.1f}% (runs without: {', '.join(f'{s:.2f}' for s in cpu_without)};"
        f" with: {', '.join(f'{s:.2f}' for s in cpu_with)})"
    )
    plain_file = (work / "store-plain" / "delegate.sqlite3").stat().st_size
    indexed_file = (work / "store" / "delegate.sqlite3").stat().st_size

    orch = await AgentOrchestrator.open(work / "store")
    failed = 0
    try:
        docs, text, pages = await _index_size(orch)
        out(
            f"index: {docs:,} texts, {text / 1e6:.1f} MB of text;"
            f" search tables {pages / 1e6 if pages else 0:.1f} MB;"
            f" store {indexed_file / 1e6:.1f} MB with, {plain_file / 1e6:.1f} MB without"
        )
        for label, text_query in QUERIES.items():
            samples = []
            for _ in range(queries):
                started = time.perf_counter()
                page = await orch.search_sessions(text_query, limit=20)
                samples.append(time.perf_counter() - started)
            p95 = _p95(samples)
            target = TARGETS.get(label)
            verdict = "" if target is None else f" (target < {_ms(target)})"
            out(
                f"first results, {label} {text_query!r}: p50 {_ms(statistics.median(samples))}"
                f" p95 {_ms(p95)} n {len(samples)}; {len(page.results)} results{verdict}"
            )
            if not page.results:
                out(f"-> BAD: {text_query!r} found nothing")
                failed = 1
    finally:
        await orch.close()
    return failed


def main(argv: list[str] | None = None, out: Out | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=300, help="copies of each session (300)")
    parser.add_argument("--rounds", type=int, default=3, help="cold imports of each kind (3)")
    parser.add_argument("--queries", type=int, default=50, help="runs of each query (50)")
    parser.add_argument("--work-dir", type=Path, help="keep the corpus here for reruns")
    parser.add_argument("--smoke", action="store_true", help="K=2, one round, 5 queries")
    args = parser.parse_args(argv)
    if args.smoke:
        args.copies, args.rounds, args.queries = 2, 1, 5

    out = out or (lambda line: print(line, flush=True))
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        return asyncio.run(run(args.work_dir, args.copies, args.rounds, args.queries, out))
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        return asyncio.run(run(Path(tmp), args.copies, args.rounds, args.queries, out))


if __name__ == "__main__":
    sys.exit(main())
