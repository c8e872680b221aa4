"""Benchmark: what counting a message's tokens adds to storing it (the budget: < 5 %).

Our own sessions' context figures are counted tokens, each message counted
once (tiktoken, the bundled offline encoding). Counting costs more than
storing, so the orchestrator stores a message at once with an estimate, counts
it in a worker thread meanwhile, and applies the exact counts in the
transaction that closes the run (core.context.counting). This times, per
message size and per message:

- ``store``: appending a message whose count is known (the floor);
- ``count, then store``: counting first in a thread, then appending (before);
- ``store, count aside``: what the orchestrator does now: store with the
  estimate. What the close then pays per message is shown apart: the
  counting (one worker-thread call for the run) and the correction statements
  in the closing transaction.

Usage::

    uv run python tests/bench/bench_meters.py            # 200 messages per size
    uv run python tests/bench/bench_meters.py --smoke    # 20, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from core.config import DB_FILENAME
from core.context.counting import PendingCounts, estimate
from core.models import Role, SessionMode, SessionState
from core.store import FinishedSession, NewMessage, NewSession, Store
from core.tokens import count_tokens

README = Path(__file__).resolve().parents[2] / "README.md"
BASE_US = 1_700_000_000_000_000


def texts() -> dict[str, str]:
    prose = README.read_text(encoding="utf-8")
    return {
        "a prompt (300 chars)": prose[:300],
        "a reply (3 KB)": prose[:3_000],
        "a tool output (30 KB)": (prose * 8)[:30_000],
    }


async def _store(folder: Path) -> Store:
    store = await Store.open(folder / DB_FILENAME)
    session = NewSession("bench", "echo", SessionMode.STANDARD, "/tmp", "bench", BASE_US, 200_000)
    await store.bulk.insert(
        [FinishedSession(session, [], BASE_US, SessionState.READY)]  # no messages yet
    )
    return store


Mode = Literal["store", "count, then store", "store, count aside"]
MODES: tuple[Mode, ...] = ("store", "count, then store", "store, count aside")


async def _per_message_s(
    store: Store, text: str, n: int, mode: Mode, ids: Iterator[int]
) -> tuple[float, float, float]:
    """Seconds per message to store ``n`` of them the ``mode`` way (median of each),
    and per message at the close: counting them, correcting their counts."""
    pending = PendingCounts()
    times = []
    for _ in range(n):
        message_id = f"m{next(ids)}"
        t0 = time.perf_counter()
        if mode == "count, then store":
            tokens = await asyncio.to_thread(count_tokens, text)
        else:
            tokens = estimate(text)
        seq = await store.messages.append(
            "bench", [NewMessage(message_id, Role.ASSISTANT, text, BASE_US, tokens)]
        )
        if mode == "store, count aside":
            pending.stored(seq[0], text, tokens)
        times.append(time.perf_counter() - t0)
    counting = correcting = 0.0
    if mode == "store, count aside":
        t0 = time.perf_counter()
        corrections = await pending.corrections()
        t1 = time.perf_counter()
        async with store.db.transaction() as db:
            await store.messages.correct_counts_in(db, "bench", corrections)
        counting, correcting = (t1 - t0) / n, (time.perf_counter() - t1) / n
    return statistics.median(times), counting, correcting


async def measure(n: int) -> list[tuple[str, dict[Mode, float], float, float]]:
    """Seconds per message by message size and mode (the quietest of a few rounds, each
    the median of its messages); counting and correcting at the close."""
    count_tokens("warm up")  # load the encoding outside the timings
    rows = []
    ids = itertools.count()
    with tempfile.TemporaryDirectory() as tmp:
        store = await _store(Path(tmp))
        try:
            for name, text in texts().items():
                # Interleaved rounds, so a busy neighbour slows every mode alike.
                rounds: dict[Mode, list[float]] = {mode: [] for mode in MODES}
                counted: list[float] = []
                corrected: list[float] = []
                for round_ in range(len(MODES)):
                    # Each mode goes first once: a table that grows favours the first.
                    for mode in MODES[round_:] + MODES[:round_]:
                        seconds, counting, correcting = await _per_message_s(
                            store, text, n, mode, ids
                        )
                        rounds[mode].append(seconds)
                        if mode == "store, count aside":
                            counted.append(counting)
                            corrected.append(correcting)
                # The quietest round of each: what a busy neighbour did not add.
                best = {mode: min(t) for mode, t in rounds.items()}
                rows.append((name, best, min(counted), min(corrected)))
        finally:
            await store.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="20 messages per size")
    args = parser.parse_args(argv)
    rows = asyncio.run(measure(20 if args.smoke else 200))
    header = "".join(f"{mode + ' ms':>22}" for mode in MODES)
    print(f"{'message':<24}{header}   added   close: count ms  correct ms")
    for name, seconds, counting, correcting in rows:
        floor = seconds["store"]
        added = 100.0 * (seconds["store, count aside"] - floor) / floor
        cells = "".join(f"{seconds[mode] * 1000:>22.3f}" for mode in MODES)
        print(
            f"{name:<24}{cells}   {added:>+5.1f}%   {counting * 1000:>14.3f}"
            f"  {correcting * 1000:>10.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
