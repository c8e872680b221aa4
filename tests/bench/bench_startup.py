"""Benchmark of the picker's start over imported sessions.

Uses the issue's corpus, built by ``bench_import.build_corpus`` (every real main
session file of ``tests/fixtures/realdata`` copied K times with its ids replaced;
K=300: 3,900 files, about 1.6 GB). Every figure is printed with the load average
beside it and, where there is one, as a ratio to its reference measured in the
same rounds (the per-round median of ours over the reference).

In this process, the real app (``tui.app.create_app(..., import_sources=...)``)
inside ``App.run_test(size=(160, 48))``, the timer started just before entering
``run_test``:

- **cold start** on an empty store, each one right after a whole
  ``ccusage daily --json --offline`` over the same corpus (the peer, 20.0.24,
  installed into ``.cache/npm-agents`` when missing): until the first frame that
  shows rows of the list (``SessionList.sessions`` not empty), and until the
  background import worker has finished (the whole corpus indexed; target
  < 2.5 s and below ccusage), with the import report's own figures;
- **warm start** (store indexed, transcripts unchanged): until the first frame
  with rows, interleaved with a bare Textual app that shows a 50-row
  ``DataTable`` measured the same way (the floor; target within 70 ms); the
  re-scan each warm start runs in the background (the import report's
  ``duration_s``; target < 50 ms); every session reachable by paging
  ``list_sessions`` to the end.

As real processes in tmux (160x48), the whole process as a user sees it, with
bytecode written by a warm-up run first (``PYTHONPYCACHEPREFIX``): the timer
starts just before ``tmux new-session`` and stops at the first ``capture-pane``
that shows a row. ``delegate --all`` cold (``uv run``), then, interleaved round
by round: the bare Textual app and ``delegate --all`` from the venv and through
``uv run``, ``codex resume --all`` (warm: its cold runs, each on a fresh
``CODEX_HOME``, come first) and ``claude --resume``, the peers as the CI pins
them in ``.cache/npm-agents``. Before the rounds, one start stays until the panel
has kept its first page (``tui.first_page``); each warm start from the venv or
through ``uv run`` finds it, and is also timed to the panel's own first frame (the
line over the list, which only the app draws). A third warm program starts with no
kept page, as every start did before there was one. Peers run with ``HOME`` set to a temp dir
holding the corpus as ``~/.claude`` and ``~/.codex``, dummy API keys and base
URLs on a closed loopback port: they never reach a model. A program that shows
something other than its list is reported as "could not measure" with what it
showed.

Usage::

    uv run python tests/bench/bench_startup.py                        # K=300
    uv run python tests/bench/bench_startup.py --work-dir /tmp/sbench  # keep corpus and stores
    uv run python tests/bench/bench_startup.py --corpus /tmp/ibench/corpus  # reuse bench_import's
    uv run python tests/bench/bench_startup.py --smoke --no-peers     # K=2, a few runs (CI)
    uv run python tests/bench/bench_startup.py --no-tmux --no-peers   # in-process figures only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for entry in (
    str(ROOT),
    str(HERE),
):  # run as a script: make `core`, `tui`, `bench_import` importable
    if entry not in sys.path:
        sys.path.insert(0, entry)

import bench_peers  # noqa: E402

SIZE = (160, 48)
WAIT_S = 60.0  # every wait is bounded
IMPORT_WAIT_S = 300.0  # a whole-corpus import on a busy 2-core machine can take minutes
FIRST_ROWS_TARGET_S = 1.0
WHOLE_CORPUS_TARGET_S = 2.5
FLOOR_MARGIN_S = 0.07
RESCAN_TARGET_S = 0.05
BARE_ROWS = 50  # bare_table_app.ROWS
BARE_SCRIPT = HERE / "bare_table_app.py"
AGENTS_BIN = bench_peers.AGENTS_BIN
DUMMY_ANTHROPIC_KEY = "sk-ant-api03-delegate-benchmark-dummy-key-not-real-0000"
CLOSED_PORT = "http://127.0.0.1:9"  # discard port: nothing listens, no request leaves
Out = Callable[[str], None]

# What a row looks like in each pane (a line of the list, not a header).
OUR_ROW = r"\d+ turns? · "
# What only the app draws (the line over the list): the panel's own first frame, after
# the first page a start draws before its imports (``tui.first_page``).
OUR_FRAME = r"by last activity"
BARE_ROW = r"bare-row-\d+"
CODEX_ROW = r"^\s*(?:›\s+)?\d+[a-z]+ ago\s{2,}\S"
CLAUDE_ROW = r"\d+ \w+ ago · "


# --- the floor: a bare Textual app with a 50-row table --------------------------


def bare_app() -> Any:
    from bare_table_app import BareTable

    return BareTable()


# --- frames ------------------------------------------------------------------------


class FirstFrame:
    """The time of the first frame displayed while ``condition()`` holds."""

    def __init__(self, app: Any, condition: Callable[[], bool]) -> None:
        self.at: asyncio.Future[float] | None = None
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count or self.at is None or self.at.done():
                return
            try:
                holds = condition()
            except Exception:  # the picker is not mounted yet
                holds = False
            if holds:
                self.at.set_result(time.perf_counter())

        app._display = display

    def arm(self) -> None:
        self.at = asyncio.get_running_loop().create_future()

    async def wait(self, what: str) -> float:
        assert self.at is not None
        try:
            return await asyncio.wait_for(self.at, WAIT_S)
        except TimeoutError:
            raise SystemExit(f"no frame with {what} after {WAIT_S:.0f} s") from None


@dataclass
class Start:
    first_rows_s: float
    import_done_s: float | None = None
    report: Any = None
    rows: int = 0
    first_row_id: str | None = None
    listed_s: float | None = None  # every session listed (the import's listing pass ended)


async def app_start(data_dir: Path, roots: tuple[Path, Path]) -> Start:
    """One start of the real app; waits for its import worker to finish too."""
    from textual.worker import Worker, WorkerState

    from tui.app import create_app
    from tui.widgets.session_list import SessionList

    app = create_app(data_dir, import_sources=roots)

    def rows_shown() -> bool:
        listed = app.screen.query_one(SessionList)
        return bool(listed.sessions) and bool(listed.display)

    frame = FirstFrame(app, rows_shown)
    finished: list[float] = []
    import_done = asyncio.Event()

    def hook(message: Any) -> None:
        if (
            isinstance(message, Worker.StateChanged)
            and message.worker.group == "import"
            and message.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
            and not finished
        ):
            finished.append(time.perf_counter())
            import_done.set()

    frame.arm()
    t0, t0_wall = time.perf_counter(), time.time()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        shown = await frame.wait("the first rows")
        listed = app.screen.query_one(SessionList)
        first_id = listed.sessions[0].conversation_id
        try:
            await asyncio.wait_for(import_done.wait(), IMPORT_WAIT_S)
        except TimeoutError:
            raise SystemExit(
                f"the import worker did not finish within {IMPORT_WAIT_S:.0f} s"
            ) from None
        await pilot.pause()
        assert app.orchestrator is not None
        report = await app.orchestrator.last_import_report()
        rows = len(listed.sessions)
    listed = None
    if report is not None and report.listing_s is not None:  # the import's start, on this clock
        listed = report.started_at.timestamp() - t0_wall + report.listing_s
    return Start(shown - t0, finished[0] - t0, report, rows, first_id, listed)


async def bare_start() -> float:
    from textual.widgets import DataTable

    app = bare_app()
    frame = FirstFrame(app, lambda: app.query_one(DataTable).row_count > 0)
    frame.arm()
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        shown = await frame.wait("the table's rows")
        await pilot.pause()
    return shown - t0


async def reachable(data_dir: Path) -> tuple[int, int, int, int]:
    """(sessions reached by paging to the end, distinct ids, pages, count in the store)."""
    from core.models import SessionScope
    from core.orchestrator import AgentOrchestrator

    every = SessionScope(top_level=False, warmup=True)  # sub-agents and warm-ups as rows
    orch = await AgentOrchestrator.open(data_dir)
    try:
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await orch.list_sessions(100, cursor, scope=every)
            pages += 1
            seen.extend(s.conversation_id for s in page.sessions)
            cursor = page.next_cursor
            if cursor is None or pages > 100_000:
                break
        total = await orch.count_sessions(scope=every)
    finally:
        await orch.close()
    return len(seen), len(set(seen)), pages, total


async def newest_id(data_dir: Path) -> str | None:
    from core.orchestrator import AgentOrchestrator

    orch = await AgentOrchestrator.open(data_dir)
    try:
        page = await orch.list_sessions(1)
        return page.sessions[0].conversation_id if page.sessions else None
    finally:
        await orch.close()


async def direct_rescans(data_dir: Path, roots: tuple[Path, Path], n: int) -> list[float]:
    from core.orchestrator import AgentOrchestrator

    orch = await AgentOrchestrator.open(data_dir)
    try:
        samples = []
        for _ in range(n):
            report = await orch.import_sources(*roots)
            samples.append(report.duration_s)
            if report.files_read or report.bytes_read:
                raise SystemExit("an unchanged re-scan read files")
        return samples
    finally:
        await orch.close()


# --- formatting --------------------------------------------------------------------


def _s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {_s(statistics.median(ordered))}, max {_s(p95)}, n {len(ordered)}"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


@dataclass
class Results:
    missed: list[str] = field(default_factory=list)

    def check(self, name: str, ok: bool) -> str:
        if not ok:
            self.missed.append(name)
        return _verdict(ok)


# --- tmux --------------------------------------------------------------------------


class Tmux:
    """A private tmux server (its own socket); every session is killed after use."""

    def __init__(self) -> None:
        self.socket = f"delegate-bench-{os.getpid()}"
        self.exe = shutil.which("tmux")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert self.exe is not None
        return subprocess.run(
            [self.exe, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )

    def first_match(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        pattern: str,
        timeout: float = WAIT_S,
    ) -> tuple[float | None, str]:
        """Seconds from ``new-session`` to a pane matching ``pattern`` (None: timed out)."""
        times, pane = self.matches(name, argv, env, cwd, [pattern], timeout)
        return times[0], pane

    def matches(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        patterns: list[str],
        timeout: float = WAIT_S,
        keep: Callable[[], bool] | None = None,
    ) -> tuple[list[float | None], str]:
        """Seconds from ``new-session`` to the first pane matching each of ``patterns``
        (None: timed out); the program is killed once all matched and ``keep()`` is
        false (it is polled until ``timeout``)."""
        # `env -i`: the pane gets exactly ``env``, not the tmux server's environment
        # (which would keep, e.g., a PYTHONDONTWRITEBYTECODE the benchmark dropped).
        inner = shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv])
        # Keep the pane after the process ends, to show what it printed.
        command = f"{inner}; echo '[exited '$?']'; sleep {int(timeout) + 5}"
        regexes = [re.compile(p, re.MULTILINE) for p in patterns]
        times: list[float | None] = [None] * len(patterns)
        pane = ""
        t0 = time.perf_counter()
        started = self._run(
            "new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
            "-c", str(cwd), command,
        )  # fmt: skip
        try:
            if started.returncode != 0:
                return times, f"tmux new-session failed: {started.stderr.strip()}"
            while time.perf_counter() - t0 < timeout:
                pane = self._run("capture-pane", "-p", "-t", name).stdout
                now = time.perf_counter() - t0
                for i, regex in enumerate(regexes):
                    if times[i] is None and regex.search(pane):
                        times[i] = now
                if None not in times and (keep is None or not keep()):
                    break
                time.sleep(0.01)
            return times, pane
        finally:
            self._run("kill-session", "-t", name)
            time.sleep(0.3)  # let the killed process and its children go

    def close(self) -> None:
        if self.exe is not None:
            self._run("kill-server")


def _pane_summary(pane: str) -> str:
    lines = [ln.strip() for ln in pane.splitlines() if ln.strip()]
    return " | ".join(lines[:6])[:300] or "(empty pane)"


def _process_env(base: dict[str, str], work: Path) -> dict[str, str]:
    """Python run as installed: bytecode cached (beside the bench, not in the venv)."""
    env = dict(base)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env["UV_CACHE_DIR"] = os.environ.get("UV_CACHE_DIR") or _uv_cache_dir()
    return env


def _uv_cache_dir() -> str:
    uv = shutil.which("uv")
    if uv is None:
        return str(Path.home() / ".cache" / "uv")
    return subprocess.run([uv, "cache", "dir"], capture_output=True, text=True).stdout.strip()


def _peer_home(work: Path, corpus: Path) -> tuple[Path, Path]:
    """A HOME whose ~/.claude and ~/.codex hold the corpus; and the cwd for claude."""
    home = work / "peer-home"
    cwd = work / "peer-cwd"
    projects = home / ".claude" / "projects"
    shutil.rmtree(home, ignore_errors=True)
    projects.mkdir(parents=True)
    cwd.mkdir(parents=True, exist_ok=True)
    corpus_projects = corpus / "claude" / "projects"
    for project in corpus_projects.iterdir():
        (projects / project.name).symlink_to(project)
    # `claude --resume` lists the project of its cwd: give the cwd the corpus's
    # biggest project (the most sessions).
    biggest = max(corpus_projects.iterdir(), key=lambda p: sum(1 for _ in p.iterdir()))
    (projects / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))).symlink_to(biggest)
    # A returning user: onboarding done, the key approved, the folder trusted.
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [DUMMY_ANTHROPIC_KEY[-20:]], "rejected": []},
                "projects": {
                    str(cwd): {
                        "hasTrustDialogAccepted": True,
                        "hasCompletedProjectOnboarding": True,
                    }
                },
            }
        )
    )
    _fresh_codex_home(home, corpus)
    return home, cwd


def _fresh_codex_home(home: Path, corpus: Path) -> Path:
    """A new ~/.codex: the corpus's rollouts (hard links) and an API-key login, no state."""
    codex = home / ".codex"
    shutil.rmtree(codex, ignore_errors=True)
    codex.mkdir(parents=True)
    subprocess.run(
        ["cp", "-al", str(corpus / "codex" / "sessions"), str(codex / "sessions")], check=True
    )
    (codex / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-delegate-bench-dummy"}))
    (codex / "config.toml").write_text("check_for_update_on_startup = false\n")
    return codex


def stop_codex_daemons(home: Path) -> int:
    """Stop the app-server daemons codex started from ``home`` (they outlive the TUI)."""
    stopped = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].startswith(str(home).encode() + b"/"):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
                stopped += 1
            except OSError:
                pass
    if stopped:
        time.sleep(0.5)
    return stopped


def _peer_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "ANTHROPIC_API_KEY": DUMMY_ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": CLOSED_PORT,
        "OPENAI_API_KEY": "sk-delegate-bench-dummy",
        "OPENAI_BASE_URL": CLOSED_PORT + "/v1",
        "PATH": os.environ.get("PATH", ""),
        "TERM": "tmux-256color",
    }


def tmux_runs(
    tmux: Tmux,
    label: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    pattern: str,
    runs: int,
    prepare: Callable[[], None] | None = None,
) -> tuple[list[float], str | None]:
    samples: list[float] = []
    for i in range(runs):
        if prepare is not None:
            prepare()
        took, pane = tmux.first_match(f"b{i}", argv, env, cwd, pattern)
        if took is None:
            return samples, f"no row within {WAIT_S:.0f} s; the pane showed: {_pane_summary(pane)}"
        samples.append(took)
    return samples, None


# --- the run -------------------------------------------------------------------------


def run(work: Path, corpus: Path, copies: int, args: argparse.Namespace, out: Out) -> int:
    import bench_import
    import textual

    res = Results()
    out(
        f"machine: {os.cpu_count()} cores (nproc), Python {sys.version.split()[0]},"
        f" Textual {textual.__version__}, {SIZE[0]}x{SIZE[1]}; {bench_peers.load_now()} at start"
    )
    files, size = bench_import.build_corpus(corpus, copies, out)
    roots = (corpus / "claude", corpus / "codex")
    ccusage = None if args.no_peers else bench_peers.ensure_ccusage(out)
    cc_env = bench_peers.ccusage_env(corpus, work / "ccusage-home")

    # 1. cold starts, each on an empty store, each after ccusage over the same corpus
    import tui.app  # noqa: F401  (imported before the timer, as the CLI has by then)

    cold: list[Start] = []
    cc_s: list[float] = []
    cc_failure = "--no-peers" if args.no_peers else None if ccusage else "not installed"
    cc_days = 0
    load = bench_peers.Load()
    for i in range(args.cold_runs):
        load.note()
        if ccusage is not None and cc_failure is None:
            took, cc_failure, cc_days = bench_peers.run_ccusage(ccusage, cc_env)
            if cc_failure is None:
                cc_s.append(took)
        data_dir = work / f"store-cold-{i}"
        shutil.rmtree(data_dir, ignore_errors=True)
        cold.append(asyncio.run(app_start(data_dir, roots)))
        load.note()
    store = work / "store-cold-0"
    firsts = [c.first_rows_s for c in cold]
    wholes = [c.import_done_s or 0.0 for c in cold]
    report = cold[0].report
    out(
        f"cold start, first rows on screen: {_stats(firsts)} (target < 1 s) "
        + res.check("cold first rows", statistics.median(firsts) < FIRST_ROWS_TARGET_S)
        + f"; {load}"
    )
    whole_ok = statistics.median(wholes) < WHOLE_CORPUS_TARGET_S
    versus = "target < 2.5 s"
    if cc_s:
        whole_ok = whole_ok and statistics.median(wholes) < statistics.median(cc_s)
        versus = (
            f"{bench_peers.paired_ratio(wholes, cc_s)} of ccusage's time (per-round median);"
            " target < 2.5 s and below ccusage"
        )
    out(
        f"cold start, whole corpus indexed (import worker done): {_stats(wholes)}; {versus} "
        + res.check("cold whole corpus", whole_ok)
        + f"; {load}"
    )
    listed = [c.listed_s for c in cold if c.listed_s is not None]
    if len(listed) == len(cold):
        listed_ok = statistics.median(listed) < WHOLE_CORPUS_TARGET_S
        versus = "target < 2.5 s"
        if cc_s:
            listed_ok = listed_ok and statistics.median(listed) < statistics.median(cc_s)
            versus = f"{bench_peers.paired_ratio(listed, cc_s)} of ccusage's time; {versus}"
        out(
            f"cold start, every session listed (the import's listing pass, before the full"
            f" read): {_stats(listed)}; {versus} and below ccusage "
            + res.check("cold every session listed", listed_ok)
            + f"; {load}"
        )
    else:
        out("cold start, every session listed: not run (the new files are under its threshold)")
    if cc_s:
        out(
            f"ccusage {bench_peers.CCUSAGE_VERSION} daily --json --offline (whole process,"
            f" {cc_days} days), one before each cold start: {_stats(cc_s)}; {load}"
        )
    else:
        out(f"ccusage daily --json --offline: could not measure: {cc_failure}; {load}")
    out(
        "cold import report: "
        + "; ".join(
            f"duration {_s(c.report.duration_s)}, first batch {_s(c.report.first_batch_s or 0)},"
            f" {c.report.files_seen:,} files, {c.report.bytes_read / 1e9:.2f} GB,"
            f" {c.report.sessions_added:,} sessions, {c.report.workers} workers"
            for c in cold
        )
    )
    if report.files_seen != files or report.bytes_read != size:
        out(f"-> BAD: the cold import saw {report.files_seen} files, expected {files}")
        return 1
    newest = asyncio.run(newest_id(store))
    out(
        "cold start, first row shown is the newest session of the corpus: "
        + ("yes" if all(c.first_row_id == newest for c in cold) else "no")
    )

    # 2. warm starts, interleaved with the floor
    asyncio.run(bare_start())  # first Textual start in this process: warm it up, like ours
    warm: list[Start] = []
    floor: list[float] = []
    load = bench_peers.Load()
    for _ in range(args.warm_runs):
        load.note()
        floor.append(asyncio.run(bare_start()))
        warm.append(asyncio.run(app_start(store, roots)))
    load.note()
    warm_first = [w.first_rows_s for w in warm]
    gap = statistics.median(warm_first) - statistics.median(floor)
    out(
        f"bare Textual floor (DataTable, {BARE_ROWS} rows), first rows on screen:"
        f" {_stats(floor)}; {load}"
    )
    out(
        f"warm start, first rows on screen: {_stats(warm_first)};"
        f" {gap * 1000:+.0f} ms from the floor's p50,"
        f" {bench_peers.paired_ratio(warm_first, floor)} of the floor (target within 70 ms) "
        + res.check("warm first rows vs floor (in process)", gap <= FLOOR_MARGIN_S)
        + f"; {load}"
    )
    rescans = [w.report.duration_s for w in warm]
    if any(w.report.files_read or w.report.bytes_read for w in warm):
        out("-> BAD: a warm start's re-scan read files")
        return 1
    out(
        f"warm re-scan at start, nothing changed (import report duration): {_stats(rescans)}"
        f" (target < 50 ms) "
        + res.check("warm re-scan", statistics.median(rescans) < RESCAN_TARGET_S)
        + f"; {load}"
    )
    direct = asyncio.run(direct_rescans(store, roots, args.rescans))
    out(
        f"warm re-scan, import_sources alone (idle app-less): {_stats(direct)};"
        f" {bench_peers.load_now()}"
    )
    seen, distinct, pages, total = asyncio.run(reachable(store))
    ok = seen == distinct == total == report.sessions_added
    out(
        f"sessions reachable by paging list_sessions to the end: {distinct:,} of {total:,}"
        f" in the store ({pages} pages of 100; cold import added {report.sessions_added:,}) "
        + res.check("all sessions reachable", ok)
    )

    # 3. real processes in tmux: ours, the floor and the peers, interleaved
    tmux = Tmux()
    if args.no_tmux or tmux.exe is None:
        why = "--no-tmux" if args.no_tmux else "tmux not found"
        for label in (*TMUX_OURS, *TMUX_PEERS):
            out(f"{label}: could not measure: {why}")
    else:
        try:
            _tmux(tmux, work, corpus, store, args, out, res)
        finally:
            tmux.close()

    out(f"{bench_peers.load_now()} at the end (other processes may share the machine)")
    out("result: " + ("all targets met" if not res.missed else "missed: " + "; ".join(res.missed)))
    return 1 if args.strict and res.missed else 0


TMUX_OURS = (
    "tmux, delegate cold (uv run delegate)",
    "tmux, bare Textual floor (.venv/bin/python)",
    "tmux, delegate warm (.venv/bin/delegate)",
    "tmux, bare Textual floor (uv run python)",
    "tmux, delegate warm (uv run delegate)",
    "tmux, delegate warm without its kept first page (.venv/bin/delegate)",
)
TMUX_PEERS = (
    "tmux, codex resume --all, cold",
    "tmux, codex resume --all, warm",
    "tmux, claude --resume",
)


@dataclass
class Program:
    """One program started in tmux, again and again, and its first-rows times."""

    label: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    pattern: str
    samples: list[float] = field(default_factory=list)
    failure: str | None = None
    load: bench_peers.Load = field(default_factory=bench_peers.Load)
    prepare: Callable[[], None] | None = None  # before each run
    frame: str | None = None  # a second pattern, timed in the same runs
    frame_samples: list[float] = field(default_factory=list)

    def once(self, tmux: Tmux) -> None:
        if self.failure is not None:
            return
        if self.prepare is not None:
            self.prepare()
        self.load.note()
        patterns = [self.pattern] + ([self.frame] if self.frame else [])
        times, pane = tmux.matches("b0", self.argv, self.env, self.cwd, patterns)
        found = [t for t in times if t is not None]
        if len(found) < len(times):
            self.failure = f"no row within {WAIT_S:.0f} s; the pane showed: {_pane_summary(pane)}"
            return
        self.samples.append(found[0])
        if self.frame:
            self.frame_samples.append(found[1])

    def report(self, out: Out, extra: str = "") -> None:
        if self.failure is not None and not self.samples:
            out(f"{self.label}: could not measure: {self.failure}")
        else:
            out(f"{self.label}: {_stats(self.samples)}{extra}; {self.load}")


def _versus_floor(ours: Program, floor: Program) -> str:
    return _versus_floor_samples(ours.samples, floor.samples)


def _versus_floor_samples(ours: list[float], floor: list[float]) -> str:
    if not ours or not floor:
        return ""
    gap = statistics.median(ours) - statistics.median(floor)
    return (
        f"; {gap * 1000:+.0f} ms from the floor's p50,"
        f" {bench_peers.paired_ratio(ours, floor)} of the floor"
    )


def _tmux(
    tmux: Tmux,
    work: Path,
    corpus: Path,
    store: Path,
    args: argparse.Namespace,
    out: Out,
    res: Results,
) -> None:
    uv = shutil.which("uv") or "uv"
    venv_bin = Path(sys.executable).parent
    home = work / "ours-home"
    home.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(corpus / "claude"),
        CODEX_HOME=str(corpus / "codex"),
        TERM="tmux-256color",
    )
    env = _process_env(base, work)
    env.pop("TMUX", None)
    # Every project: started inside a repository, the list covers that project only.
    ours_uv = [uv, "run", "--project", str(ROOT), "delegate", "--all", "--data-dir"]
    floor_direct = Program(
        TMUX_OURS[1], [str(venv_bin / "python"), str(BARE_SCRIPT)], env, ROOT, BARE_ROW
    )
    ours_argv = [str(venv_bin / "delegate"), "--all", "--data-dir", str(store)]
    ours_direct = Program(TMUX_OURS[2], ours_argv, env, ROOT, OUR_ROW)
    floor_uv = Program(
        TMUX_OURS[3], [uv, "run", "--project", str(ROOT), "python", str(BARE_SCRIPT)], env,
        ROOT, BARE_ROW,
    )  # fmt: skip
    ours_uv_warm = Program(TMUX_OURS[4], [*ours_uv, str(store)], env, ROOT, OUR_ROW)
    ours_unkept = Program(TMUX_OURS[5], ours_argv, env, ROOT, OUR_ROW, frame=OUR_FRAME)
    # Warm-up: write the bytecode cache, as an installed package has it.
    tmux.first_match("warmup-bare", floor_direct.argv, env, ROOT, BARE_ROW)
    tmux.first_match("warmup-ours", ours_direct.argv, env, ROOT, OUR_ROW)
    # A start that stays until the panel has kept its first page (tui.first_page), as a
    # person's does; each warm start finds it (or, without it, finds none).
    kept, copy = store / "first-page.json", work / "first-page.kept"
    kept.unlink(missing_ok=True)
    tmux.matches(
        "keeping", ours_direct.argv, env, ROOT, [OUR_FRAME], keep=lambda: not kept.exists()
    )
    if kept.exists():
        shutil.copyfile(kept, copy)
        ours_direct.prepare = ours_uv_warm.prepare = lambda: shutil.copyfile(copy, kept)
        ours_direct.frame = OUR_FRAME
    else:
        out(f"{TMUX_OURS[2]}: no first page was kept; the starts below draw none first")
    ours_unkept.prepare = lambda: kept.unlink(missing_ok=True)

    samples: list[float] = []
    failure = None
    load = bench_peers.Load()
    for i in range(args.cold_runs):
        cold_dir = work / f"store-tmux-cold-{i}"
        shutil.rmtree(cold_dir, ignore_errors=True)
        load.note()
        got, failure = tmux_runs(tmux, "", [*ours_uv, str(cold_dir)], env, ROOT, OUR_ROW, 1)
        samples += got
        if failure:
            break
    if failure and not samples:
        out(f"{TMUX_OURS[0]}: could not measure: {failure}")
    else:
        out(f"{TMUX_OURS[0]}: {_stats(samples)}; {load}")

    programs = [floor_direct, ours_direct, floor_uv, ours_uv_warm, ours_unkept]
    peers: dict[str, Program] = {}
    peer_home = None
    try:
        if not args.no_peers:
            peer_home, cwd = _peer_home(work, corpus)
            peers = _peer_programs(tmux, peer_home, cwd, corpus, args, out)
        programs += peers.values()
        for _ in range(args.tmux_runs):  # interleaved, so load changes hit all of them alike
            for program in programs:
                program.once(tmux)
    finally:
        if peer_home is not None:
            stop_codex_daemons(peer_home)

    floor_direct.report(out)
    ok = bool(ours_direct.samples) and bool(floor_direct.samples)
    if ok:
        gap = statistics.median(ours_direct.samples) - statistics.median(floor_direct.samples)
        ok = gap <= FLOOR_MARGIN_S
    ours_direct.report(
        out,
        _versus_floor(ours_direct, floor_direct)
        + " (target within 70 ms) "
        + res.check("warm first rows vs floor (tmux)", ok),
    )
    if ours_direct.frame_samples:
        out(
            f"{TMUX_OURS[2]}, the panel's first frame (over its first page): "
            f"{_stats(ours_direct.frame_samples)}"
            + _versus_floor_samples(ours_direct.frame_samples, floor_direct.samples)
        )
    ours_unkept.report(out, _versus_floor(ours_unkept, floor_direct))
    if ours_unkept.frame_samples:
        out(
            f"{TMUX_OURS[5]}, the panel's first frame: {_stats(ours_unkept.frame_samples)}"
            + _versus_floor_samples(ours_unkept.frame_samples, floor_direct.samples)
        )
    floor_uv.report(out)
    ours_uv_warm.report(out, _versus_floor(ours_uv_warm, floor_uv))
    if args.no_peers:
        out(f"{TMUX_PEERS[0]}: could not measure: --no-peers")
    for label in TMUX_PEERS[1:]:
        peer = peers.get(label)
        if peer is None:
            out(f"{label}: could not measure: {'--no-peers' if args.no_peers else 'not installed'}")
            continue
        extra = _versus_floor(peer, floor_direct)
        if peer.samples and ours_direct.samples:
            ahead = statistics.median(ours_direct.samples) < statistics.median(peer.samples)
            than = bench_peers.paired_ratio(ours_direct.samples, peer.samples)
            extra += f"; delegate (.venv/bin) is {than} of it (target: ahead) " + res.check(
                f"warm first rows vs {label[6:]}", ahead
            )
        peer.report(out, extra)


def _peer_programs(
    tmux: Tmux, home: Path, cwd: Path, corpus: Path, args: argparse.Namespace, out: Out
) -> dict[str, Program]:
    """The peers' warm programs; codex's cold runs are measured here, before them."""
    env = _peer_env(home)
    codex = AGENTS_BIN / "codex"
    claude = AGENTS_BIN / "claude"
    programs: dict[str, Program] = {}
    if codex.exists():
        version = subprocess.run([str(codex), "--version"], capture_output=True, text=True)
        out(f"peer: {version.stdout.strip()}")
        load = bench_peers.Load()
        load.note()
        cold, failure = tmux_runs(
            tmux,
            "codex-cold",
            [str(codex), "resume", "--all"],
            env,
            cwd,
            CODEX_ROW,
            args.cold_runs,
            prepare=lambda: (stop_codex_daemons(home), _fresh_codex_home(home, corpus)),
        )
        load.note()
        label = f"{TMUX_PEERS[0]} (fresh CODEX_HOME)"
        if failure and not cold:
            out(f"{label}: could not measure: {failure}")
        else:
            out(f"{label}: {_stats(cold)}; {load}")
        programs[TMUX_PEERS[1]] = Program(
            TMUX_PEERS[1], [str(codex), "resume", "--all"], env, cwd, CODEX_ROW
        )
    else:
        out(f"{TMUX_PEERS[0]}: could not measure: {codex} not installed")
    if claude.exists():
        version = subprocess.run([str(claude), "--version"], capture_output=True, text=True)
        out(f"peer: claude {version.stdout.strip()}")
        program = Program(TMUX_PEERS[2], [str(claude), "--resume"], env, cwd, CLAUDE_ROW)
        took, pane = tmux.first_match("claude-first", program.argv, env, cwd, CLAUDE_ROW)
        out(
            f"{TMUX_PEERS[2]}, first run: "
            + (_s(took) if took is not None else f"could not measure: {_pane_summary(pane)}")
            + f"; {bench_peers.load_now()}"
        )
        programs[TMUX_PEERS[2]] = program
    return programs


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=300, help="copies of each file (300)")
    parser.add_argument("--smoke", action="store_true", help="K=2 and single runs (CI)")
    parser.add_argument("--work-dir", type=Path, help="stores, peers' homes (default: temp)")
    parser.add_argument("--corpus", type=Path, help="corpus folder (default: WORK/corpus)")
    parser.add_argument("--cold-runs", type=int, help="cold starts (2; smoke 1)")
    parser.add_argument("--warm-runs", type=int, help="warm starts in process (10; smoke 2)")
    parser.add_argument("--tmux-runs", type=int, help="warm runs per program in tmux (5; smoke 1)")
    parser.add_argument("--rescans", type=int, default=10)
    parser.add_argument("--no-tmux", action="store_true", help="skip the tmux figures")
    parser.add_argument("--no-peers", action="store_true", help="skip codex, claude, ccusage")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.smoke:
        args.copies = 2
        args.rescans = 3
    args.cold_runs = args.cold_runs or (1 if args.smoke else 2)
    args.warm_runs = args.warm_runs or (2 if args.smoke else 10)
    args.tmux_runs = args.tmux_runs or (1 if args.smoke else 5)
    return args


def main(argv: list[str] | None = None, out: Out = print) -> int:
    args = parse_args(argv)
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        return run(args.work_dir, args.corpus or args.work_dir / "corpus", args.copies, args, out)
    with tempfile.TemporaryDirectory(prefix="delegate-startup-bench-") as tmp:
        work = Path(tmp)
        return run(work, args.corpus or work / "corpus", args.copies, args, out)


if __name__ == "__main__":
    sys.exit(main())
