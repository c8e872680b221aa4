"""Benchmark of the core store.

Builds (or reuses) a store of demo sessions, then measures with
``time.perf_counter`` over many iterations and prints p50/p95 per figure:

- ``AgentOrchestrator.list_sessions``: first page (limit 20 and limit 3) and a
  page deep in the list, reached by following next_cursor (page 2,000 at full size);
- ``AgentOrchestrator.recent_messages`` on the biggest conversation: the last 20
  messages, and an older page reached by following next_cursor to the middle;
- the whole ``delegate --data-dir D sessions list --json`` process (median of
  several runs), next to a bare ``python -c pass`` for reference;
- ``EXPLAIN QUERY PLAN`` of the paging queries: an index walked in order, no
  full table scan, no temporary B-tree for ORDER BY.

Usage::

    uv run python tests/bench/bench_core.py                 # 100k sessions, 2M messages
    uv run python tests/bench/bench_core.py --smoke         # seconds, for CI
    uv run python tests/bench/bench_core.py --data-dir DIR  # keep the built store for reruns

The store is built with a cheap token counter (``len(text) // 4``): real token
counting happens once at insert and is not what this measures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `core` importable
    sys.path.insert(0, str(ROOT))

from core import demo  # noqa: E402
from core.clock import to_us  # noqa: E402
from core.config import DB_FILENAME, ensure_data_dir  # noqa: E402
from core.orchestrator import AgentOrchestrator  # noqa: E402
from core.store import (  # noqa: E402
    SQL_LIST_SESSIONS,
    SQL_LIST_SESSIONS_AFTER,
    SQL_RECENT_MESSAGES,
    SQL_RECENT_MESSAGES_BEFORE,
    FinishedSession,
    Store,
)

FULL = {"sessions": 100_000, "messages": 2_000_000, "big_conversation": 100_000}
SMOKE = {"sessions": 2_000, "messages": 40_000, "big_conversation": 5_000}
MANIFEST = "bench-manifest.json"
DEEP_PAGE = 2_000  # page number of the "later page" figure (capped by the store's size)
PAGE = 20
BUILD_BATCH = 2_000  # sessions per bulk_insert transaction

LIST_TARGET_MS = 2.0
MESSAGES_TARGET_MS = 2.0
CLI_TARGET_MS = 400.0


def cheap_tokens(text: str) -> int:
    """Build-time token counter: real counting is not what is measured."""
    return len(text) // 4


@dataclass(frozen=True)
class Shape:
    sessions: int
    messages: int
    big_conversation: int

    @property
    def big_index(self) -> int:
        """Demo index of the big conversation: the middle of the list."""
        return self.sessions // 2

    def sizes(self) -> Iterator[tuple[int, int, int]]:
        """``(start, count, messages_per_session)`` runs covering every demo index."""
        rest = self.messages - self.big_conversation
        others = self.sessions - 1
        per, extra = divmod(rest, others)
        big = self.big_index
        yield big, 1, self.big_conversation
        # The others, in order of their demo index (skipping the big one): the
        # first `extra` of them carry one more message so the total is exact.
        for lo, hi, size in ((0, extra, per + 1), (extra, others, per)):
            for a, b in ((lo, min(hi, big)), (max(lo, big) + 1, hi + 1)):
                # ordinals [lo, hi) map to indexes [lo, big) and [big + 1, hi + 1)
                if a < b:
                    yield a, b - a, size

    def as_dict(self) -> dict[str, int]:
        return {
            "sessions": self.sessions,
            "messages": self.messages,
            "big_conversation": self.big_conversation,
        }


# --- build -------------------------------------------------------------------


def _store_counts(db_path: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
        row = conn.execute(
            "SELECT count(*), coalesce(sum(message_count), 0) FROM sessions"
        ).fetchone()
    return int(row[0]), int(row[1])


def _existing_store_ok(data_dir: Path, shape: Shape) -> bool:
    """True when ``data_dir`` holds a bench store of this shape; refuse foreign data."""
    db_path = data_dir / DB_FILENAME
    manifest_path = data_dir / MANIFEST
    if not db_path.exists():
        return False
    if not manifest_path.exists():
        raise SystemExit(
            f"{db_path} exists but was not built by this benchmark; "
            "pass an empty --data-dir (nothing there is deleted)"
        )
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("shape") == shape.as_dict() and manifest.get("complete"):
        try:
            counts = _store_counts(db_path)
        except sqlite3.Error:
            counts = (-1, -1)
        if counts == (shape.sessions, shape.messages):
            return True
    # A bench store of another size (or a build that was interrupted): rebuild it.
    for suffix in ("", "-wal", "-shm"):
        (data_dir / (DB_FILENAME + suffix)).unlink(missing_ok=True)
    manifest_path.unlink()
    return False


async def build_store(data_dir: Path, shape: Shape, out: Callable[[str], None]) -> None:
    if _existing_store_ok(data_dir, shape):
        out(f"store: reusing {data_dir / DB_FILENAME} (already the right size)")
        return
    ensure_data_dir(data_dir)
    manifest_path = data_dir / MANIFEST
    manifest_path.write_text(json.dumps({"shape": shape.as_dict(), "complete": False}))
    out(
        f"store: building {shape.sessions:,} sessions / {shape.messages:,} messages in "
        f"{data_dir / DB_FILENAME} (token counts from len(text)//4, a cheap stand-in: "
        "real token counting is not measured here)"
    )
    started = time.perf_counter()
    now_us = to_us(datetime.now(UTC))
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        for start, count, per in shape.sizes():
            for lo in range(start, start + count, BUILD_BATCH):
                n = min(BUILD_BATCH, start + count - lo)
                batch: list[FinishedSession] = list(
                    demo.generate(n, now_us, cheap_tokens, messages_per_session=per, start=lo)
                )
                await store.bulk.insert(batch)
    finally:
        await store.close()
    with closing(sqlite3.connect(data_dir / DB_FILENAME)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    counts = _store_counts(data_dir / DB_FILENAME)
    if counts != (shape.sessions, shape.messages):
        raise SystemExit(f"built store has {counts}, expected {shape}")
    manifest_path.write_text(json.dumps({"shape": shape.as_dict(), "complete": True}))
    out(f"store: built in {time.perf_counter() - started:.1f} s")


# --- measure -----------------------------------------------------------------


@dataclass
class Figure:
    name: str
    samples_ms: list[float]
    target_ms: float | None

    @property
    def p50(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p95(self) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def ok(self) -> bool:
        return self.target_ms is None or self.p50 < self.target_ms

    def line(self) -> str:
        target = f"< {self.target_ms:g} ms" if self.target_ms is not None else "(reference)"
        verdict = "" if self.target_ms is None else ("ok" if self.ok else "MISSED")
        return (
            f"{self.name:<58} p50 {self.p50:9.3f} ms  p95 {self.p95:9.3f} ms"
            f"  n={len(self.samples_ms):<4} target {target:<12} {verdict}"
        )


async def _timed(call: Callable[[], Awaitable[Any]], iterations: int) -> list[float]:
    for _ in range(min(10, iterations)):  # warm the page cache and the code paths
        await call()
    samples = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


async def measure_api(
    data_dir: Path, shape: Shape, iterations: int, out: Callable[[str], None]
) -> tuple[list[Figure], dict[str, Any]]:
    orch = await AgentOrchestrator.open(data_dir)
    figures: list[Figure] = []
    try:
        # Walk to the deep page through next_cursor, as a client would.
        deep_page = max(2, min(DEEP_PAGE, shape.sessions // PAGE - 1))
        cursor: str | None = None
        seen: set[str] = set()
        last_key: tuple[Any, str] | None = None
        for _ in range(deep_page - 1):
            page = await orch.list_sessions(PAGE, cursor)
            for s in page.sessions:
                key = (s.last_interacted_at, s.conversation_id)
                assert last_key is None or key < last_key, "list is not newest first"
                assert s.conversation_id not in seen, "duplicate across pages"
                seen.add(s.conversation_id)
                last_key = key
            cursor = page.next_cursor
            assert cursor is not None, "list ended before the deep page"
        deep_cursor = cursor

        async def first20() -> Any:
            return await orch.list_sessions(20)

        async def first3() -> Any:
            return await orch.list_sessions(3)

        async def deep() -> Any:
            return await orch.list_sessions(PAGE, deep_cursor)

        big_id = demo.demo_id(shape.big_index)
        big = await orch.get_session(big_id)
        assert big.metrics.messages == shape.big_conversation

        # An older page: follow next_cursor (pages of 100) to the conversation's middle.
        msg_cursor: str | None = None
        for _ in range(shape.big_conversation // 2 // 100):
            mpage = await orch.recent_messages(big_id, 100, msg_cursor)
            msg_cursor = mpage.next_cursor
        older_page = await orch.recent_messages(big_id, 20, msg_cursor)
        assert len(older_page.messages) == 20

        async def last20() -> Any:
            return await orch.recent_messages(big_id, 20)

        async def older20() -> Any:
            return await orch.recent_messages(big_id, 20, msg_cursor)

        for name, call, target in [
            ("list_sessions first page, limit 20", first20, LIST_TARGET_MS),
            ("list_sessions first page, limit 3", first3, LIST_TARGET_MS),
            (f"list_sessions page {deep_page:,} via cursor, limit 20", deep, LIST_TARGET_MS),
            (
                f"recent_messages last 20 of {shape.big_conversation:,}",
                last20,
                MESSAGES_TARGET_MS,
            ),
            (
                f"recent_messages older 20 (seq < {older_page.messages[0].seq + 1:,})",
                older20,
                MESSAGES_TARGET_MS,
            ),
        ]:
            figure = Figure(name, await _timed(call, iterations), target)
            figures.append(figure)
            out(figure.line())
        facts = {
            "deep_page": deep_page,
            "big_conversation_id": big_id,
            "deep_cursor": deep_cursor,
        }
    finally:
        await orch.close()
    return figures, facts


def _delegate_script() -> str:
    beside = Path(sys.executable).with_name("delegate")
    if beside.exists():
        return str(beside)
    found = shutil.which("delegate")
    if found is None:
        raise SystemExit("the `delegate` console script is not installed (run `uv sync`)")
    return found


def _time_process(argv: list[str], runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(argv, check=True, capture_output=True, env=env)  # warm-up (caches)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


def _cached_bytecode_env(data_dir: Path) -> dict[str, str]:
    """Bytecode written once and reused, as on a normal install, wherever we run.

    The cache lives beside the bench store (PYTHONPYCACHEPREFIX), so neither the
    venv nor the source tree is written to, even where PYTHONDONTWRITEBYTECODE is set.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(data_dir / "pycache")
    return env


def measure_cli(data_dir: Path, runs: int, out: Callable[[str], None]) -> list[Figure]:
    cli = [_delegate_script(), "--data-dir", str(data_dir), "sessions", "list", "--json"]
    listed = json.loads(subprocess.run(cli, check=True, capture_output=True, text=True).stdout)
    assert len(listed["sessions"]) == 20, "unexpected CLI output"
    assert listed["next_cursor"], "unexpected CLI output"
    cached = _cached_bytecode_env(data_dir)
    as_is = dict(os.environ)
    no_pyc = ": no .pyc" if as_is.get("PYTHONDONTWRITEBYTECODE") else ""
    figures = [
        Figure(
            "CLI `sessions list --json`, bytecode cached",
            _time_process(cli, runs, cached),
            CLI_TARGET_MS,
        ),
        Figure(
            f"CLI `sessions list --json`, env as is{no_pyc}",
            _time_process(cli, runs, as_is),
            None,
        ),
        Figure(
            "`python -c pass`, bytecode cached",
            _time_process([sys.executable, "-c", "pass"], runs, cached),
            None,
        ),
    ]
    for figure in figures:
        out(figure.line())
    return figures


HEAVY_IMPORTS = ("tiktoken", "git", "rich", "textual")


def check_cli_imports(data_dir: Path, out: Callable[[str], None]) -> bool:
    """``python -X importtime`` of the CLI: none of the heavy packages may load."""
    argv = [
        sys.executable,
        "-X",
        "importtime",
        _delegate_script(),
        "--data-dir",
        str(data_dir),
        "sessions",
        "list",
        "--json",
    ]
    env = _cached_bytecode_env(data_dir)
    stderr = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stderr
    rows = []  # (cumulative us, depth, module)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append((int(cumulative), depth, name.strip()))
    loaded = {name.split(".")[0] for _, _, name in rows}
    heavy = sorted(set(HEAVY_IMPORTS) & loaded)
    total = sum(us for us, depth, _ in rows if depth == 0)
    direct = sorted((r for r in rows if r[1] == 1), reverse=True)[:5]
    top = ", ".join(f"{name} {us / 1000:.0f}" for us, _, name in direct)
    out(f"imports: {total / 1000:.0f} ms in all ({len(loaded)} packages); biggest, in ms: {top}")
    out(
        "imports: no " + "/".join(HEAVY_IMPORTS) + " on `sessions list --json` -> ok"
        if not heavy
        else f"imports: `sessions list --json` loads {', '.join(heavy)} -> BAD"
    )
    return not heavy


def explain_plans(data_dir: Path, facts: dict[str, Any], out: Callable[[str], None]) -> bool:
    """Print the query plans; False if one scans a table or sorts in a temp B-tree."""
    from core.cursors import decode_session_cursor

    deep = decode_session_cursor(facts["deep_cursor"])
    big_id = facts["big_conversation_id"]
    queries = [
        ("list first page", SQL_LIST_SESSIONS, (PAGE + 1,)),
        (
            "list after cursor",
            SQL_LIST_SESSIONS_AFTER,
            (deep.last_interacted_us, deep.conversation_id, PAGE + 1),
        ),
        ("messages newest page", SQL_RECENT_MESSAGES, (big_id, PAGE + 1)),
        ("messages before cursor", SQL_RECENT_MESSAGES_BEFORE, (big_id, 1000, PAGE + 1)),
    ]
    all_ok = True
    with closing(sqlite3.connect(f"file:{data_dir / DB_FILENAME}?mode=ro", uri=True)) as conn:
        for name, sql, params in queries:
            details = [str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
            bad = [
                d
                for d in details
                if "TEMP B-TREE" in d or (d.startswith("SCAN") and "INDEX" not in d)
            ]
            all_ok = all_ok and not bad
            verdict = "ok" if not bad else "BAD (full scan or sort)"
            out(f"plan  {name:<24} {' | '.join(details)}  -> {verdict}")
    return all_ok


# --- entry point ---------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, help=f"sessions ({FULL['sessions']:,})")
    parser.add_argument("--messages", type=int, help=f"messages ({FULL['messages']:,})")
    parser.add_argument(
        "--big-conversation",
        type=int,
        help=f"messages in the biggest conversation ({FULL['big_conversation']:,})",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="where to build (and later reuse) the store "
        "(default: a folder per size under the system temp dir)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"small sizes for CI: {SMOKE['sessions']:,} sessions, "
        f"{SMOKE['messages']:,} messages, a {SMOKE['big_conversation']:,}-message conversation",
    )
    parser.add_argument("--iterations", type=int, help="timed calls per figure (200; smoke 50)")
    parser.add_argument("--cli-runs", type=int, help="timed CLI processes (10; smoke 3)")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a target or a query plan is missed"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parse_args(argv)
    base = SMOKE if args.smoke else FULL
    shape = Shape(
        sessions=args.sessions or base["sessions"],
        messages=args.messages or base["messages"],
        big_conversation=args.big_conversation or base["big_conversation"],
    )
    if shape.sessions < 2 * PAGE + 2 or shape.big_conversation < 300:
        raise SystemExit("need at least 42 sessions and a 300-message conversation")
    if shape.messages - shape.big_conversation < shape.sessions - 1:
        raise SystemExit("--messages must leave at least one message per other session")
    iterations = args.iterations or (50 if args.smoke else 200)
    cli_runs = args.cli_runs or (3 if args.smoke else 10)
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / (
        f"delegate-bench-{shape.sessions}-{shape.messages}-{shape.big_conversation}"
    )

    out(
        f"delegate core benchmark · {os.cpu_count()} cores · Python {sys.version.split()[0]}"
        f" · SQLite {sqlite3.sqlite_version}"
    )
    asyncio.run(build_store(data_dir, shape, out))
    figures, facts = asyncio.run(measure_api(data_dir, shape, iterations, out))
    figures += measure_cli(data_dir, cli_runs, out)
    plans_ok = explain_plans(data_dir, facts, out)
    imports_ok = check_cli_imports(data_dir, out)
    missed = [f.name for f in figures if not f.ok]
    out(
        "result: "
        + ("all targets met" if not missed else "missed: " + "; ".join(missed))
        + (", query plans use indexes" if plans_ok else ", a query plan scans or sorts")
        + (", no heavy imports" if imports_ok else ", heavy imports on the CLI path")
    )
    if args.strict and (missed or not plans_ok or not imports_ok):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
