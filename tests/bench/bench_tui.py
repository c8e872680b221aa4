"""Benchmark of the session picker.

Builds (or reuses) the same demo store as ``bench_core.py`` (100,000 sessions,
2,000,000 messages), then drives the real app (``tui.app.create_app``) headless
inside ``App.run_test(size=(160, 48))`` and prints:

- **first page**: from just before entering ``run_test`` until the first frame
  that shows the list's rows (the app opens the orchestrator, pushes the picker,
  the list's worker fetches page 1 and the screen paints it). Also, for reference,
  when the list's first ``SessionList.Loaded`` message was handled (its rows are set
  just before it is posted, so a frame may show them first). Cold first run in this
  process shown apart; p50/p95 over the following runs.
- **cursor move**: from sending one ``down`` key to the app (the event pilot.press
  sends) until the frame showing the highlight on the next row has been composited
  and turned into terminal output. Each key is sent from idle (the previous move's
  preview shown, then ``pilot.pause()``). p50/p95 over the first 300 moves and
  over all of them, page loads and garbage collections included. Also, as a
  reference, key to the frame showing that row's preview (a database query in a
  worker, then Markdown). The scroll line counts the garbage collector's full
  collections during the moves and their pauses.
- **memory**: VmRSS (and the peak, VmHWM) of this process after moving down
  through 2,000 rows, the next pages loading as the cursor nears the end.

A figure is "ok" when its p50 is under the target (as in ``bench_core.py``);
``--strict`` exits 1 when one is not.

Usage::

    uv run python tests/bench/bench_tui.py                 # 100k sessions, 2M messages
    uv run python tests/bench/bench_tui.py --data-dir DIR  # reuse (or build) the store there
    uv run python tests/bench/bench_tui.py --smoke         # 2,000 sessions, 200 rows: CI

Frames: Textual skips turning a frame into terminal sequences when headless; the
benchmark does that step anyway (``CompositorUpdate.render_segments``) so a frame
costs what it costs in a terminal, short of the write to the tty.

The store is built in a child process (``--build-only``). The scroll runs in
another one (``--scroll-only``, JSON back on stdout), a fresh process with one app
as in real use, so its memory figure holds only that app, the benchmark and what
they imported. The starts run in this process, each in a new event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for entry in (str(ROOT), str(HERE)):  # run as a script: make `core`, `tui`, `bench_core` importable
    if entry not in sys.path:
        sys.path.insert(0, entry)

import bench_core  # noqa: E402
from bench_core import FULL, SMOKE, Figure, Shape  # noqa: E402

SIZE = (160, 48)
FIRST_PAGE_TARGET_MS = 300.0
MOVE_TARGET_MS = 16.0
RSS_TARGET_MB = 200.0
WAIT_S = 30.0  # a frame that never comes is a failure, not a hang


def read_memory_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB (1 MB = 2**20 bytes)."""
    fields: dict[str, float] = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
    except OSError:  # not Linux: the peak is all there is
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak_mb = peak / 2**20 if sys.platform == "darwin" else peak / 1024
        return peak_mb, peak_mb
    return fields["VmRSS"], fields["VmHWM"]


class FrameProbe:
    """Wraps ``app._display``: renders each frame to terminal output, timestamps it.

    ``watch(condition)`` gives the time of the first frame displayed after the
    call for which ``condition()`` holds (checked as the frame is displayed).
    """

    def __init__(self, app: Any) -> None:
        from textual._compositor import CompositorUpdate

        self.app = app
        self.frames = 0
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[float]]] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return  # nothing was shown
            if isinstance(renderable, CompositorUpdate):
                renderable.render_segments(app.console)  # what a terminal would be sent
            at = time.perf_counter()
            self.frames += 1
            for waiter in list(self._waiters):
                condition, future = waiter
                if not future.done() and _holds(condition):
                    future.set_result(at)
                    self._waiters.remove(waiter)

        app._display = display

    def watch(self, condition: Callable[[], bool]) -> asyncio.Future[float]:
        """From now on, the time of the first frame shown while ``condition()`` holds."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiters.append((condition, future))
        return future

    async def wait(self, frame: asyncio.Future[float], what: str) -> float:
        try:
            return await asyncio.wait_for(frame, WAIT_S)
        except TimeoutError:
            raise SystemExit(f"no frame with {what} after {WAIT_S:.0f} s") from None
        finally:
            self._waiters = [w for w in self._waiters if w[1] is not frame]


def _holds(condition: Callable[[], bool]) -> bool:
    try:
        return condition()
    except Exception:  # the picker is not mounted yet
        return False


def _picker_parts(app: Any) -> tuple[Any, Any]:
    from tui.widgets.preview import PreviewPane
    from tui.widgets.session_list import SessionList

    return app.screen.query_one(SessionList), app.screen.query_one(PreviewPane)


def _rows_shown(app: Any) -> Callable[[], bool]:
    def shown() -> bool:
        listed, _ = _picker_parts(app)
        return len(listed.sessions) > 0 and listed.display

    return shown


async def one_start(data_dir: Path) -> tuple[float, float]:
    """(ms to the first frame with rows, ms to the first ``SessionList.Loaded``)."""
    from tui.app import create_app
    from tui.widgets.session_list import SessionList

    app = create_app(data_dir)
    probe = FrameProbe(app)
    loaded_at: list[float] = []

    def hook(message: Any) -> None:
        if isinstance(message, SessionList.Loaded) and message.first and not loaded_at:
            loaded_at.append(time.perf_counter())

    rows_frame = probe.watch(_rows_shown(app))
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        shown_at = await probe.wait(rows_frame, "the first page of rows")
        listed, _ = _picker_parts(app)
        assert len(listed.sessions) > 0
        await pilot.pause()  # let the status panel, history and preview finish before closing
    return (shown_at - t0) * 1000, (loaded_at[0] - t0) * 1000


def measure_start(data_dir: Path, runs: int, out: Callable[[str], None]) -> list[Figure]:
    """One cold start, then ``runs`` timed ones; each in a new event loop, as a process would.

    (Inside one loop, Textual keeps every finished test app reachable until the loop
    ends; separate loops keep one start's leftovers out of the next.)
    """
    cold, _ = asyncio.run(one_start(data_dir))
    shown: list[float] = []
    loaded: list[float] = []
    for _ in range(runs):
        s, ld = asyncio.run(one_start(data_dir))
        shown.append(s)
        loaded.append(ld)
    figures = [
        Figure("first page: app start -> first frame with rows", shown, FIRST_PAGE_TARGET_MS),
        Figure("first page: app start -> SessionList.Loaded handled", loaded, None),
    ]
    out(f"first page: cold first run in this process {cold:.1f} ms (not in the p50/p95)")
    for figure in figures:
        out(figure.line())
    return figures


class FullCollections:
    """Counts the garbage collector's full (generation 2) collections and their pauses."""

    def __init__(self) -> None:
        self.pauses_ms: list[float] = []
        self._started = 0.0

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses_ms.append((time.perf_counter() - self._started) * 1000)


async def _scroll(
    app: Any, pilot: Any, probe: FrameProbe, rows: int, row_ms: list[float], preview_ms: list[float]
) -> None:
    """Press down ``rows`` times, each from idle, timing each key to its frames."""
    from textual import events

    listed, preview = _picker_parts(app)
    for _ in range(rows):
        target = (listed.highlighted or 0) + 1
        if target >= len(listed.sessions):  # the next page is still loading
            more = probe.watch(lambda target=target: target < len(listed.sessions))
            await probe.wait(more, f"row {target} loaded")
        wanted = listed.sessions[target].conversation_id

        def on_row(target: int = target) -> bool:
            return bool(listed.highlighted == target)

        def on_preview(wanted: str = wanted) -> bool:
            shown = preview.session
            return shown is not None and shown.conversation_id == wanted

        row_frame = probe.watch(on_row)
        preview_frame = probe.watch(on_preview)
        t0 = time.perf_counter()
        key = events.Key("down", None)  # what pilot.press("down") sends
        key.set_sender(app)
        app._driver.send_message(key)
        row_ms.append((await probe.wait(row_frame, f"row {target} highlighted") - t0) * 1000)
        preview_ms.append((await probe.wait(preview_frame, f"row {target} preview") - t0) * 1000)
        await pilot.pause()  # idle again (CPU and worker threads) before the next key


async def measure_scroll(data_dir: Path, rows: int) -> dict[str, Any]:
    """Scroll ``rows`` rows down in one app; the samples and facts, JSON-ready."""
    from tui.app import create_app

    base_rss, _ = read_memory_mb()
    app = create_app(data_dir)
    probe = FrameProbe(app)
    row_ms: list[float] = []
    preview_ms: list[float] = []
    rows_frame = probe.watch(_rows_shown(app))
    async with app.run_test(size=SIZE) as pilot:
        await probe.wait(rows_frame, "the first page of rows")
        listed, _ = _picker_parts(app)
        await pilot.pause(0.2)
        await pilot.pause()  # status panel, history and the first preview are in
        assert listed.highlighted == 0, listed.highlighted
        frames_before = probe.frames
        collections = FullCollections()
        with collections:
            await _scroll(app, pilot, probe, rows, row_ms, preview_ms)
        frames = probe.frames - frames_before
        await pilot.pause()
        rss, hwm = read_memory_mb()
        pauses = collections.pauses_ms
        return {
            "row_ms": row_ms,
            "preview_ms": preview_ms,
            "base_rss_mb": base_rss,
            "highlighted": listed.highlighted or 0,
            "loaded_rows": len(listed.sessions),
            "options": listed.option_count,
            "frames": frames,
            "rss_mb": rss,
            "hwm_mb": hwm,
            "full_gcs": len(pauses),
            "full_gc_p50_ms": statistics.median(pauses) if pauses else 0.0,
            "full_gc_max_ms": max(pauses, default=0.0),
        }


def _scroll_in_child(data_dir: Path, rows: int) -> dict[str, Any]:
    """Run :func:`measure_scroll` in a fresh process: its memory is one app's, as in use."""
    argv = [sys.executable, __file__, "--scroll-only", "--data-dir", str(data_dir)]
    done = subprocess.run([*argv, "--rows", str(rows)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the scroll process failed:\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- entry point ---------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, help=f"sessions ({FULL['sessions']:,})")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="where to build (and later reuse) the store; the same folders as "
        "bench_core.py (default: a folder per size under the system temp dir)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"small sizes for CI: {SMOKE['sessions']:,} sessions, 200 rows scrolled, 3 starts",
    )
    parser.add_argument("--starts", type=int, help="timed app starts (10; smoke 3)")
    parser.add_argument("--rows", type=int, help="rows to move down through (2,000; smoke 200)")
    parser.add_argument(
        "--moves", type=int, help="moves in the first cursor figure (300; smoke 200)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scroll-only", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _shape(args: argparse.Namespace) -> Shape:
    base = SMOKE if args.smoke else FULL
    sessions = args.sessions or base["sessions"]
    if args.sessions and args.sessions != base["sessions"]:
        # Keep bench_core's proportions: 20 messages a session, one big conversation.
        big = max(300, min(base["big_conversation"], sessions))
        return Shape(sessions, big + 19 * (sessions - 1), big)
    return Shape(sessions, base["messages"], base["big_conversation"])


def _build_in_child(argv: list[str], out: Callable[[str], None]) -> None:
    """Build (or check) the store in another process, so its memory is not ours."""
    done = subprocess.run(
        [sys.executable, __file__, *argv, "--build-only"], capture_output=True, text=True
    )
    for line in done.stdout.splitlines():
        out(line)
    if done.returncode != 0:
        raise SystemExit(f"building the store failed:\n{done.stderr}")


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    shape = _shape(args)
    data_dir = args.data_dir or Path(tempfile.gettempdir()) / (
        f"delegate-bench-{shape.sessions}-{shape.messages}-{shape.big_conversation}"
    )
    if args.build_only:
        asyncio.run(bench_core.build_store(data_dir, shape, out))
        return 0
    starts = args.starts or (3 if args.smoke else 10)
    rows = args.rows or (200 if args.smoke else 2_000)
    moves = args.moves or (200 if args.smoke else 300)
    if rows >= shape.sessions:
        raise SystemExit("--rows must be below the number of sessions")
    if args.scroll_only:
        out(json.dumps(asyncio.run(measure_scroll(data_dir, rows))))
        return 0

    import textual

    out(
        f"delegate picker benchmark · {os.cpu_count()} cores · Python {sys.version.split()[0]}"
        f" · Textual {textual.__version__} · {SIZE[0]}x{SIZE[1]} headless"
    )
    _build_in_child([*argv, "--data-dir", str(data_dir)] if args.data_dir is None else argv, out)
    out(f"store: {shape.sessions:,} sessions / {shape.messages:,} messages in {data_dir}")

    import tui.app  # noqa: F401  (imported before the first start, as by the CLI)

    figures = measure_start(data_dir, starts, out)
    facts = _scroll_in_child(data_dir, rows)
    row_ms, preview_ms = facts["row_ms"], facts["preview_ms"]
    n = min(moves, len(row_ms))
    scroll_figures = [
        Figure(f"cursor move: key -> frame, first {n} moves", row_ms[:n], MOVE_TARGET_MS),
        Figure(f"cursor move: key -> frame, all {len(row_ms):,} moves", row_ms, MOVE_TARGET_MS),
        Figure(f"cursor move: key -> preview frame, all {len(row_ms):,}", preview_ms, None),
    ]
    for figure in scroll_figures:
        out(figure.line())
    figures += scroll_figures
    out(
        f"scroll: moved down {rows:,} rows to row {facts['highlighted']}; "
        f"{facts['loaded_rows']} rows loaded ({facts['options']} options), "
        f"{facts['frames']} frames; {facts['full_gcs']} full garbage collections "
        f"(pause p50 {facts['full_gc_p50_ms']:.1f} ms, max {facts['full_gc_max_ms']:.1f} ms)"
    )
    rss_ok = facts["rss_mb"] < RSS_TARGET_MB
    out(
        f"memory: VmRSS after scrolling {rows:,} rows {facts['rss_mb']:.1f} MB "
        f"(peak VmHWM {facts['hwm_mb']:.1f} MB; {facts['base_rss_mb']:.1f} MB after imports, "
        f"before the app)  target < {RSS_TARGET_MB:g} MB " + ("ok" if rss_ok else "MISSED")
    )
    missed = [f.name for f in figures if not f.ok]
    if not rss_ok:
        missed.append("memory")
    out("result: " + ("all targets met" if not missed else "missed: " + "; ".join(missed)))
    if args.strict and missed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
