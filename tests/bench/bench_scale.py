"""Benchmark of one Claude Code project with 100,000 sub-agent files.

Builds the tree under a work dir: one project, 100 session folders, each with
its main session file and ``<session>/subagents/agent-<hex>.jsonl`` plus
``agent-<hex>.meta.json`` (the layout Claude Code writes from 2.1.2). Every
sub-agent file is a real sub-agent transcript of ``tests/fixtures/realdata``
cut to its first lines (small files), with its ``agentId`` and the parent's
``sessionId`` replaced, each with its own mtime. Then, each step in a child
process of its own so that its peak RSS is its own (``resource.getrusage``):

- a cold index into an empty store (``AgentOrchestrator.import_sources``);
- ``list_sessions`` first page (limit 50), and the count of sessions;
- re-scans with nothing changed (p50 / p95; no file may be read).

The machine's load average is printed beside every figure.

Usage::

    uv run python tests/bench/bench_scale.py --work-dir /tmp/scalebench   # 100,000 files
    uv run python tests/bench/bench_scale.py --smoke                      # 2,000 files, CI
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `core` importable
    sys.path.insert(0, str(ROOT))

REALDATA = ROOT / "tests" / "fixtures" / "realdata"
PROJECT = "-work-scale"
SESSIONS = 100
LINES_KEPT = 4
Out = Callable[[str], None]
_AGENT_NAME = re.compile(r"agent-([0-9a-f]+)\.jsonl")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def _templates() -> list[tuple[str, str, bytes, bytes]]:
    """(agent id, parent session id, first lines, meta) of every real layout-2 sub-agent."""
    found = []
    for path in sorted((REALDATA / "claude" / "projects").glob("*/*/subagents/agent-*.jsonl")):
        match = _AGENT_NAME.fullmatch(path.name)
        assert match is not None
        lines = path.read_bytes().splitlines(keepends=True)[:LINES_KEPT]
        meta = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
        found.append(
            (
                match.group(1),
                path.parent.parent.name,
                b"".join(lines),
                meta.read_bytes() if meta.exists() else b"",
            )
        )
    if not found:
        raise SystemExit(f"no sub-agent transcripts under {REALDATA}")
    return found


def _main_session() -> bytes:
    """A small real main session (its first lines) to sit beside the sub-agent folders."""
    for path in sorted((REALDATA / "claude" / "projects").glob("*/*.jsonl")):
        lines = path.read_bytes().splitlines(keepends=True)
        if not path.name.startswith("agent-") and len(lines) >= LINES_KEPT:
            return b"".join(lines[:LINES_KEPT])
    raise SystemExit("no main session to copy")


def build_tree(root: Path, files: int, out: Out) -> tuple[int, int]:
    """Write (or reuse) ``files`` sub-agent transcripts under ``root``; returns (files, bytes).

    ``files`` counts sub-agent transcripts; the session files beside them are extra.
    """
    stamp = root / "tree.json"
    want = {"files": files, "sessions": SESSIONS, "lines": LINES_KEPT}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        meta = json.loads((root / "sizes.json").read_text())
        out(f"tree: reusing {meta['files']:,} files, {meta['bytes'] / 1e6:.0f} MB in {root}")
        return meta["files"], meta["bytes"]
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    templates = _templates()
    main = _main_session()
    main_id = re.search(rb'"sessionId":"([0-9a-f-]{36})"', main)
    project = root / "claude" / "projects" / PROJECT
    base_ns = time.time_ns() - (files + SESSIONS) * 1_000_000_000
    n = size = 0
    per_session = max(1, -(-files // SESSIONS))
    for s in range(min(SESSIONS, files)):
        session = str(uuid.UUID(int=(s << 64) | (1 << 127) | 0xACE))
        folder = project / session / "subagents"
        folder.mkdir(parents=True)
        data = main.replace(main_id.group(1), session.encode()) if main_id else main
        path = project / f"{session}.jsonl"
        path.write_bytes(data)
        os.utime(path, ns=(base_ns + n * 1_000_000_000,) * 2)
        n += 1
        size += len(data)
        for a in range(s * per_session, min(files, (s + 1) * per_session)):
            old_agent, old_parent, lines, meta = templates[a % len(templates)]
            agent = f"a{a:016x}"
            data = lines.replace(old_agent.encode(), agent.encode()).replace(
                old_parent.encode(), session.encode()
            )
            path = folder / f"agent-{agent}.jsonl"
            path.write_bytes(data)
            if meta:
                (folder / f"agent-{agent}.meta.json").write_bytes(meta)
            os.utime(path, ns=(base_ns + n * 1_000_000_000,) * 2)
            n += 1
            size += len(data)
    (root / "sizes.json").write_text(json.dumps({"files": n, "bytes": size}))
    stamp.write_text(json.dumps(want))
    out(
        f"tree: built {n:,} files ({files:,} sub-agents in {min(SESSIONS, files)} sessions),"
        f" {size / 1e6:.0f} MB in {time.perf_counter() - started:.1f} s"
    )
    return n, size


# --- the steps, each run in a child process --------------------------------


def _rss_mb() -> tuple[float, float]:
    """Peak RSS (MB) of this process, and of its largest finished child (a worker).

    This process's own peak is the kernel's high-water mark of its memory
    (``VmHWM``): Linux keeps ``ru_maxrss`` across ``exec``, so a step started by
    a big process (a test run) would report that process's peak as its own.
    """
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            me = next(int(ln.split()[1]) for ln in status if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError, IndexError):
        pass  # not Linux: ru_maxrss is this process's own there
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, kids


async def _step(kind: str, tree: Path, data_dir: Path, runs: int) -> dict[str, object]:
    from core.orchestrator import AgentOrchestrator

    claude, codex = tree / "claude", tree / "no-codex"
    result: dict[str, object] = {}
    orch = await AgentOrchestrator.open(data_dir)
    try:
        if kind == "index":
            t = time.perf_counter()
            report = await orch.import_sources(claude, codex)
            result["index_s"] = time.perf_counter() - t
            result["report_s"] = report.duration_s
            result["first_batch_s"] = report.first_batch_s
            result["files_seen"] = report.files_seen
            result["files_read"] = report.files_read
            result["bytes_read"] = report.bytes_read
            result["sessions_added"] = report.sessions_added
            result["workers"] = report.workers
        elif kind == "list":
            samples = []
            for _ in range(runs):
                t = time.perf_counter()
                page = await orch.list_sessions(50)
                samples.append(time.perf_counter() - t)
            result["list_s"] = samples
            result["page"] = len(page.sessions)
            result["count"] = await orch.count_sessions()
        else:
            samples, reported, read = [], [], 0
            for _ in range(runs):
                t = time.perf_counter()
                report = await orch.import_sources(claude, codex)
                samples.append(time.perf_counter() - t)
                reported.append(report.duration_s)
                read += report.files_read + report.bytes_read
            result["rescan_s"] = samples
            result["report_s"] = reported
            result["read"] = read
    finally:
        await orch.close()
    result["rss_mb"], result["children_rss_mb"] = _rss_mb()
    return result


def _child(kind: str, tree: Path, data_dir: Path, runs: int) -> dict[str, Any]:
    """Run one step in a fresh interpreter; its JSON answer."""
    done = subprocess.run(
        [sys.executable, __file__, "--step", kind, str(tree), str(data_dir), str(runs)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"step {kind} failed:\n{done.stdout}\n{done.stderr}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {_ms(statistics.median(ordered))} p95 {_ms(p95)} n {len(ordered)}"


def run(work: Path, files: int, rescans: int, out: Out, rss_limit_mb: float) -> int:
    out(f"machine: {os.cpu_count()} cores (nproc), Python {sys.version.split()[0]}; {_load()}")
    total, size = build_tree(work / "tree", files, out)
    data_dir = work / "store"
    shutil.rmtree(data_dir, ignore_errors=True)
    bad = False

    r = _child("index", work / "tree", data_dir, 1)
    out(
        f"cold index: {float(r['index_s']):.2f} s for {int(r['files_seen']):,} files,"
        f" {int(r['bytes_read']) / 1e6:.0f} MB, {int(r['sessions_added']):,} sessions,"
        f" {r['workers']} worker processes; first batch {_ms(float(r['first_batch_s'] or 0))};"
        f" peak RSS {float(r['rss_mb']):.0f} MB (workers {float(r['children_rss_mb']):.0f} MB);"
        f" {_load()}"
    )
    if r["files_seen"] != total or r["bytes_read"] != size:
        got = f"{r['files_seen']} / {r['bytes_read']}"
        out(f"-> BAD: expected {total} files / {size} bytes, got {got}")
        bad = True
    if float(r["rss_mb"]) >= rss_limit_mb:
        out(f"-> BAD: cold index RSS {float(r['rss_mb']):.0f} MB >= {rss_limit_mb:.0f} MB")
        bad = True

    r = _child("list", work / "tree", data_dir, 20)
    out(
        f"list_sessions first page (limit 50): {_stats(r['list_s'])};"
        f" {r['page']} rows, {int(r['count']):,} sessions reachable;"
        f" peak RSS {float(r['rss_mb']):.0f} MB; {_load()}"
    )
    if r["page"] != min(50, int(r["count"])):
        out("-> BAD: first page incomplete")
        bad = True

    r = _child("rescan", work / "tree", data_dir, rescans)
    out(
        f"re-scan, nothing changed: {_stats(r['rescan_s'])}"
        f" (report duration {_stats(r['report_s'])});"
        f" peak RSS {float(r['rss_mb']):.0f} MB; {_load()} (targets < 1 s, < {rss_limit_mb:.0f} MB)"
    )
    if r["read"]:
        out("-> BAD: an unchanged re-scan read files")
        bad = True
    if float(r["rss_mb"]) >= rss_limit_mb:
        out(f"-> BAD: re-scan RSS {float(r['rss_mb']):.0f} MB >= {rss_limit_mb:.0f} MB")
        bad = True
    store = data_dir / "delegate.db"
    if store.exists():
        out(f"store: {store.stat().st_size / 1e6:.0f} MB")
    out("done")
    return 1 if bad else 0


def main(argv: list[str] | None = None, out: Out = print) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--step":
        kind, tree, data_dir, runs = argv[1], Path(argv[2]), Path(argv[3]), int(argv[4])
        print(json.dumps(asyncio.run(_step(kind, tree, data_dir, runs))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="sub-agent files (100,000)")
    parser.add_argument("--smoke", action="store_true", help="2,000 files, 3 re-scans")
    parser.add_argument("--work-dir", type=Path, help="tree and store (default: a temp dir)")
    parser.add_argument("--rescans", type=int, default=10)
    parser.add_argument("--rss-limit-mb", type=float, default=200.0)
    args = parser.parse_args(argv)
    files, rescans = args.files, args.rescans
    if args.smoke:
        files, rescans = 2_000, 3
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        return run(args.work_dir, files, rescans, out, args.rss_limit_mb)
    with tempfile.TemporaryDirectory(prefix="delegate-scale-bench-") as tmp:
        return run(Path(tmp), files, rescans, out, args.rss_limit_mb)


if __name__ == "__main__":
    sys.exit(main())
