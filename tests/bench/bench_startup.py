"""Benchmark of the picker's start over imported sessions, for issue 4 ("Performance").

Uses the issue's corpus, built by ``bench_import.build_corpus`` (every real main
session file of ``tests/fixtures/realdata`` copied K times with its ids replaced;
K=300: 3,900 files, about 1.6 GB), and prints:

In this process, the real app (``tui.app.create_app(..., import_sources=...)``)
inside ``App.run_test(size=(160, 48))``, the timer started just before entering
``run_test``:

- **cold start** on an empty store: until the first frame that shows rows of the
  list (``SessionList.sessions`` not empty), and until the background import
  worker has finished (the whole corpus indexed), with the import report's own
  figures;
- **warm start** (store indexed, transcripts unchanged): until the first frame
  with rows, next to a bare Textual app that shows a 50-row ``DataTable``
  measured the same way (the floor); the re-scan each warm start runs in the
  background (the import report's ``duration_s``); every session reachable by
  paging ``list_sessions`` to the end.

As real processes in tmux (160x48), the whole process as a user sees it: the
timer starts just before ``tmux new-session`` and stops at the first
``capture-pane`` that shows a row: ``uv run delegate --data-dir D`` (cold and
warm), the same bare Textual app, and the peers when installed in
``.cache/npm-agents`` (``codex resume --all`` cold/warm, ``claude --resume``) and
``.cache/npm-bench`` (``ccusage daily --json --offline``, timed as a plain
subprocess). Peers run with ``HOME`` set to a temp dir holding the corpus as
``~/.claude`` and ``~/.codex``, dummy API keys and base URLs on a closed
loopback port: they never reach a model. A peer that shows something other than
its picker is reported as "could not measure" with what it showed.

Usage::

    uv run python tests/bench/bench_startup.py                        # K=300
    uv run python tests/bench/bench_startup.py --work-dir /tmp/sbench  # keep corpus and stores
    uv run python tests/bench/bench_startup.py --corpus /tmp/ibench/corpus  # reuse bench_import's
    uv run python tests/bench/bench_startup.py --smoke                # K=2, a few runs (CI)
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

SIZE = (160, 48)
WAIT_S = 60.0  # every wait is bounded
FIRST_ROWS_TARGET_S = 1.0
WHOLE_CORPUS_TARGET_S = 8.0
FLOOR_MARGIN_S = 0.1
RESCAN_TARGET_S = 0.1
BARE_ROWS = 50  # bare_table_app.ROWS
BARE_SCRIPT = HERE / "bare_table_app.py"
AGENTS_BIN = ROOT / ".cache" / "npm-agents" / "node_modules" / ".bin"
CCUSAGE_BIN = ROOT / ".cache" / "npm-bench" / "node_modules" / ".bin" / "ccusage"
DUMMY_ANTHROPIC_KEY = "sk-ant-api03-delegate-benchmark-dummy-key-not-real-0000"
CLOSED_PORT = "http://127.0.0.1:9"  # discard port: nothing listens, no request leaves
Out = Callable[[str], None]

# What a row looks like in each pane (a line of the list, not a header).
OUR_ROW = r"\d+ turns? · "
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
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        shown = await frame.wait("the first rows")
        listed = app.screen.query_one(SessionList)
        first_id = listed.sessions[0].conversation_id
        try:
            await asyncio.wait_for(import_done.wait(), WAIT_S)
        except TimeoutError:
            raise SystemExit(f"the import worker did not finish within {WAIT_S:.0f} s") from None
        await pilot.pause()
        assert app.orchestrator is not None
        report = await app.orchestrator.last_import_report()
        rows = len(listed.sessions)
    return Start(shown - t0, finished[0] - t0, report, rows, first_id)


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
        inner = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *argv])
        # Keep the pane after the process ends, to show what it printed.
        command = f"{inner}; echo '[exited '$?']'; sleep {int(timeout) + 5}"
        regex = re.compile(pattern, re.MULTILINE)
        pane = ""
        t0 = time.perf_counter()
        started = self._run(
            "new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
            "-c", str(cwd), command,
        )  # fmt: skip
        try:
            if started.returncode != 0:
                return None, f"tmux new-session failed: {started.stderr.strip()}"
            while time.perf_counter() - t0 < timeout:
                pane = self._run("capture-pane", "-p", "-t", name).stdout
                if regex.search(pane):
                    return time.perf_counter() - t0, pane
                time.sleep(0.01)
            return None, pane
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


def _report_tmux(
    out: Out, label: str, samples: list[float], failure: str | None, first: float | None = None
) -> list[float]:
    if failure is not None and not samples:
        out(f"{label}: could not measure: {failure}")
    elif first is not None:
        rest = f"; then {_stats(samples)}" if samples else ""
        out(f"{label}: first run {_s(first)}{rest}")
    else:
        out(f"{label}: {_stats(samples)}")
    return samples


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
    load = os.getloadavg()
    out(
        f"machine: {os.cpu_count()} cores (nproc), Python {sys.version.split()[0]},"
        f" Textual {textual.__version__}, {SIZE[0]}x{SIZE[1]};"
        f" load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start"
    )
    files, size = bench_import.build_corpus(corpus, copies, out)
    roots = (corpus / "claude", corpus / "codex")

    # 1. cold starts, each on an empty store
    import tui.app  # noqa: F401  (imported before the timer, as the CLI has by then)

    cold: list[Start] = []
    for i in range(args.cold_runs):
        data_dir = work / f"store-cold-{i}"
        shutil.rmtree(data_dir, ignore_errors=True)
        cold.append(asyncio.run(app_start(data_dir, roots)))
    store = work / "store-cold-0"
    firsts = [c.first_rows_s for c in cold]
    wholes = [c.import_done_s or 0.0 for c in cold]
    report = cold[0].report
    out(
        f"cold start, first rows on screen: {_stats(firsts)} (target < 1 s) "
        + res.check("cold first rows", statistics.median(firsts) < FIRST_ROWS_TARGET_S)
    )
    out(
        f"cold start, whole corpus indexed (import worker done): {_stats(wholes)}"
        f" (target < 8 s) "
        + res.check("cold whole corpus", statistics.median(wholes) < WHOLE_CORPUS_TARGET_S)
    )
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
    for _ in range(args.warm_runs):
        floor.append(asyncio.run(bare_start()))
        warm.append(asyncio.run(app_start(store, roots)))
    warm_first = [w.first_rows_s for w in warm]
    gap = statistics.median(warm_first) - statistics.median(floor)
    out(f"bare Textual floor (DataTable, {BARE_ROWS} rows), first rows on screen: {_stats(floor)}")
    out(
        f"warm start, first rows on screen: {_stats(warm_first)};"
        f" {gap * 1000:+.0f} ms from the floor's p50 (target within 100 ms) "
        + res.check("warm first rows vs floor", gap <= FLOOR_MARGIN_S)
    )
    rescans = [w.report.duration_s for w in warm]
    if any(w.report.files_read or w.report.bytes_read for w in warm):
        out("-> BAD: a warm start's re-scan read files")
        return 1
    out(
        f"warm re-scan at start, nothing changed (import report duration): {_stats(rescans)}"
        f" (target < 100 ms) " + res.check("warm re-scan", statistics.median(rescans) < 0.1)
    )
    direct = asyncio.run(direct_rescans(store, roots, args.rescans))
    out(f"warm re-scan, import_sources alone (idle app-less): {_stats(direct)}")
    seen, distinct, pages, total = asyncio.run(reachable(store))
    ok = seen == distinct == total == report.sessions_added
    out(
        f"sessions reachable by paging list_sessions to the end: {distinct:,} of {total:,}"
        f" in the store ({pages} pages of 100; cold import added {report.sessions_added:,}) "
        + res.check("all sessions reachable", ok)
    )

    # 3. real processes in tmux
    tmux = Tmux()
    if args.no_tmux or tmux.exe is None:
        why = "--no-tmux" if args.no_tmux else "tmux not found"
        for label in (
            "tmux, delegate cold (uv run delegate)",
            "tmux, delegate warm (uv run delegate)",
            "tmux, delegate warm (.venv/bin/delegate)",
            "tmux, bare Textual floor (uv run python)",
            "tmux, bare Textual floor (.venv/bin/python)",
        ):
            out(f"{label}: could not measure: {why}")
    else:
        try:
            _tmux_ours(tmux, work, corpus, store, args, out)
        finally:
            tmux.close()
    if args.no_peers or tmux.exe is None:
        why = "--no-peers" if args.no_peers else "tmux not found"
        for label in ("codex resume --all, cold", "codex resume --all, warm", "claude --resume"):
            out(f"tmux, {label}: could not measure: {why}")
        out(f"ccusage daily --json: could not measure: {why}")
    else:
        tmux = Tmux()
        try:
            _peers(tmux, work, corpus, args, out)
        finally:
            tmux.close()

    out(
        f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        " (other processes may share the machine)"
    )
    out("result: " + ("all targets met" if not res.missed else "missed: " + "; ".join(res.missed)))
    return 1 if args.strict and res.missed else 0


def _tmux_ours(
    tmux: Tmux, work: Path, corpus: Path, store: Path, args: argparse.Namespace, out: Out
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
    bare_uv = [uv, "run", "--project", str(ROOT), "python", str(BARE_SCRIPT)]
    bare_direct = [str(venv_bin / "python"), str(BARE_SCRIPT)]
    ours_uv = [uv, "run", "--project", str(ROOT), "delegate", "--data-dir"]
    ours_direct = [str(venv_bin / "delegate"), "--data-dir"]
    # Warm-up: write the bytecode cache, as an installed package has it.
    tmux.first_match("warmup-bare", bare_direct, env, ROOT, BARE_ROW)
    tmux.first_match("warmup-ours", [*ours_direct, str(store)], env, ROOT, OUR_ROW)

    n = args.tmux_runs
    counter = iter(range(10_000))

    def fresh_store() -> None:
        nonlocal cold_dir
        cold_dir = work / f"store-tmux-cold-{next(counter)}"
        shutil.rmtree(cold_dir, ignore_errors=True)

    cold_dir = work / "store-tmux-cold"
    samples: list[float] = []
    failure = None
    for _ in range(args.cold_runs):
        fresh_store()
        got, failure = tmux_runs(tmux, "", [*ours_uv, str(cold_dir)], env, ROOT, OUR_ROW, 1)
        samples += got
        if failure:
            break
    _report_tmux(out, "tmux, delegate cold (uv run delegate)", samples, failure)
    floor_uv: list[float] = []
    floor_direct: list[float] = []
    ours_warm_uv: list[float] = []
    ours_warm_direct: list[float] = []
    failures: dict[str, str | None] = {}
    for _ in range(n):  # interleaved, so load changes hit all of them alike
        for label, argv, pattern, into in (
            ("floor-uv", bare_uv, BARE_ROW, floor_uv),
            ("ours-uv", [*ours_uv, str(store)], OUR_ROW, ours_warm_uv),
            ("floor-direct", bare_direct, BARE_ROW, floor_direct),
            ("ours-direct", [*ours_direct, str(store)], OUR_ROW, ours_warm_direct),
        ):
            if failures.get(label):
                continue
            got, failures[label] = tmux_runs(tmux, label, argv, env, ROOT, pattern, 1)
            into += got
    _report_tmux(out, "tmux, delegate warm (uv run delegate)", ours_warm_uv, failures["ours-uv"])
    _report_tmux(
        out, "tmux, delegate warm (.venv/bin/delegate)", ours_warm_direct, failures["ours-direct"]
    )
    _report_tmux(out, "tmux, bare Textual floor (uv run python)", floor_uv, failures["floor-uv"])
    _report_tmux(
        out, "tmux, bare Textual floor (.venv/bin/python)", floor_direct, failures["floor-direct"]
    )
    if ours_warm_uv and floor_uv:
        gap = statistics.median(ours_warm_uv) - statistics.median(floor_uv)
        out(f"tmux, warm delegate minus floor (both uv run, p50): {gap * 1000:+.0f} ms")
    if ours_warm_direct and floor_direct:
        gap = statistics.median(ours_warm_direct) - statistics.median(floor_direct)
        out(f"tmux, warm delegate minus floor (both from the venv, p50): {gap * 1000:+.0f} ms")


def _peers(tmux: Tmux, work: Path, corpus: Path, args: argparse.Namespace, out: Out) -> None:
    home, cwd = _peer_home(work, corpus)
    try:
        _peers_in(tmux, home, cwd, corpus, args, out)
    finally:
        stop_codex_daemons(home)


def _peers_in(
    tmux: Tmux, home: Path, cwd: Path, corpus: Path, args: argparse.Namespace, out: Out
) -> None:
    env = _peer_env(home)
    codex = AGENTS_BIN / "codex"
    claude = AGENTS_BIN / "claude"
    n = args.tmux_runs
    if codex.exists():
        version = subprocess.run([str(codex), "--version"], capture_output=True, text=True)
        out(f"peer: {version.stdout.strip()}")
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
        _report_tmux(out, "tmux, codex resume --all, cold (fresh CODEX_HOME)", cold, failure)
        warm, failure = tmux_runs(
            tmux, "codex-warm", [str(codex), "resume", "--all"], env, cwd, CODEX_ROW, n
        )
        _report_tmux(out, "tmux, codex resume --all, warm (second run on)", warm, failure)
    else:
        out(f"tmux, codex resume --all, cold: could not measure: {codex} not installed")
        out(f"tmux, codex resume --all, warm: could not measure: {codex} not installed")
    if claude.exists():
        version = subprocess.run([str(claude), "--version"], capture_output=True, text=True)
        out(f"peer: claude {version.stdout.strip()}")
        runs, failure = tmux_runs(
            tmux, "claude", [str(claude), "--resume"], env, cwd, CLAUDE_ROW, n + 1
        )
        first = runs.pop(0) if runs else None
        _report_tmux(out, "tmux, claude --resume", runs, failure, first)
    else:
        out(f"tmux, claude --resume: could not measure: {claude} not installed")
    if CCUSAGE_BIN.exists():
        version = subprocess.run([str(CCUSAGE_BIN), "--version"], capture_output=True, text=True)
        out(f"peer: ccusage {version.stdout.strip()}")
        cc_env = {**env, "CLAUDE_CONFIG_DIR": str(corpus / "claude")}
        samples: list[float] = []
        failure = None
        for _ in range(n):
            t0 = time.perf_counter()
            done = subprocess.run(
                [str(CCUSAGE_BIN), "daily", "--json", "--offline"],
                env=cc_env,
                capture_output=True,
                text=True,
                timeout=WAIT_S,
            )
            took = time.perf_counter() - t0
            if done.returncode != 0 or not done.stdout.lstrip().startswith("{"):
                failure = f"exit {done.returncode}: {(done.stderr or done.stdout)[:200]}"
                break
            samples.append(took)
        days = len(json.loads(done.stdout).get("daily", [])) if not failure else 0
        label = f"ccusage daily --json --offline (whole process, {days} days)"
        _report_tmux(out, label, samples, failure)
    else:
        out(
            "ccusage daily --json: could not measure: not installed"
            " (npm install --prefix .cache/npm-bench ccusage@20.0.24)"
        )


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
