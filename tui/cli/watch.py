"""``delegate watch``: the live supervisor, headless, in the foreground.

Runs until SIGINT or SIGTERM (exit 0). Logs to ``watch.log`` in the data
folder (rotated). Every event the supervisor publishes is printed on stdout:
one JSON object per line with ``--json`` (flushed per line, for scripts),
otherwise one short line a person can read. See docs/supervisor.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Iterator
from datetime import datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from core.atomic_files import disk_full_as_error, is_disk_full
from core.errors import DiskFull
from core.events import (
    BusEvent,
    RunActivity,
    RunOutput,
    RunsChanged,
    SessionsChanged,
    WatchStatus,
)
from core.orchestrator import AgentOrchestrator
from core.redact import redact

LOG_FILENAME = "watch.log"
LOG_BYTES, LOG_BACKUPS = 1_000_000, 3
IDS_SHOWN = 3


def add_parser(subparsers: Any) -> None:
    """``delegate watch [--json] [--force-polling] [--rescan S] [--claude-dir D] ...``."""
    watch = subparsers.add_parser(
        "watch",
        help="run the live supervisor in the foreground (Ctrl+C stops it)",
        description="Watch the store and the Claude Code / Codex transcript folders; "
        "print every change. Logs to watch.log in the data folder.",
    )
    watch.add_argument("--json", action="store_true", help="one JSON object per event")
    watch.add_argument(
        "--force-polling",
        action="store_true",
        help="re-scan the transcript folders periodically instead of file events",
    )
    watch.add_argument(
        "--rescan", type=_seconds, default=30.0, metavar="S", help="re-scan interval (30)"
    )
    watch.add_argument("--claude-dir", type=Path, help="Claude Code folder (~/.claude)")
    watch.add_argument("--codex-dir", type=Path, help="Codex folder (~/.codex)")
    watch.add_argument(
        "--no-transcripts", action="store_true", help="watch the store only, not transcripts"
    )
    watch.set_defaults(handler=cmd_watch)


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0.05 <= seconds <= 86_400:
        raise argparse.ArgumentTypeError("between 0.05 and 86400 seconds")
    return seconds


async def cmd_watch(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.supervisor import Supervisor  # deferred: watchfiles is for this command only

    stop = asyncio.Event()
    log_path = orch.data_dir / LOG_FILENAME
    with _logging_to(log_path) as full, _stopped_by_signals(stop):
        remove = orch.bus.add_listener(_printer(as_json=args.json))
        try:
            supervisor = Supervisor(
                orch,
                claude_dir=args.claude_dir,
                codex_dir=args.codex_dir,
                watch_transcripts=not args.no_transcripts,
                force_polling=args.force_polling,
                rescan_s=args.rescan,
            )
            async with supervisor:
                if full.problem is not None and not supervisor.is_leader:
                    raise full.problem  # a full disk from the start: say so, and stop
                full.go_on()
                logging.getLogger(__name__).info("watching as %s", supervisor.holder)
                await _until_stopped_or_store_lost(orch, stop)
        finally:
            remove()
    return 0


STORE_LOOK_S = 1.0


async def _until_stopped_or_store_lost(orch: AgentOrchestrator, stop: asyncio.Event) -> None:
    """Wait for a signal; a store file replaced or removed meanwhile ends the watch with
    its error (it writes nothing more there; a restart opens the file that is there)."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), STORE_LOOK_S)
        lost = orch.store_lost()
        if lost is not None:
            logging.getLogger(__name__).error("%s", lost)
            raise lost


@contextlib.contextmanager
def _stopped_by_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop``: a clean shutdown that releases the lease."""
    loop = asyncio.get_running_loop()
    caught = (signal.SIGINT, signal.SIGTERM)
    for sig in caught:
        loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig in caught:
            loop.remove_signal_handler(sig)


class _DiskFullLines(logging.Handler):
    """A full disk, said once on stderr as ``delegate: disk_full: ...`` while the watch
    goes on (it leads again, and logs again, once space is freed).

    ``problem``: the store's full disk met while starting (the lease could not be
    written), which ends the watch at once; nothing is said before :meth:`go_on`.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.problem: DiskFull | None = None
        self._said: set[str] = set()
        self._waiting: list[DiskFull] = []
        self._live = False

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        for arg in args:
            if isinstance(arg, DiskFull):
                self.problem = self.problem or arg
                self.say(arg)

    def say(self, problem: DiskFull) -> None:
        if not self._live:
            self._waiting.append(problem)
        elif problem.message not in self._said:
            self._said.add(problem.message)
            print(f"delegate: {problem.code}: {redact(problem.message)}", file=sys.stderr)

    def go_on(self) -> None:
        """The watch runs: say what was met while it started."""
        self._live = True
        for problem in self._waiting:
            self.say(problem)
        self._waiting.clear()


class _LogFile(RotatingFileHandler):
    """``watch.log``; a full disk loses log lines, never shows a traceback."""

    def __init__(self, path: Path, full: _DiskFullLines) -> None:
        with disk_full_as_error(path.parent, LOG_FILENAME):
            super().__init__(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS)
        self._full = full
        self._folder = str(path.parent)

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if exc is not None and is_disk_full(exc):
            self._full.say(DiskFull(self._folder, f"{LOG_FILENAME} not written"))
            return
        super().handleError(record)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # flushing into a full disk
            super().close()


@contextlib.contextmanager
def _logging_to(path: Path) -> Iterator[_DiskFullLines]:
    full = _DiskFullLines()
    handler = _LogFile(path, full)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.addHandler(full)
    root.setLevel(logging.INFO)
    try:
        yield full
    finally:
        root.removeHandler(full)
        root.removeHandler(handler)
        root.setLevel(previous)
        handler.close()


def _printer(*, as_json: bool) -> Any:
    def show(event: BusEvent) -> None:
        if isinstance(event, RunOutput):
            return  # streamed chunks of this process's own runs: not news here
        line = event.model_dump_json() if as_json else describe(event)
        logging.getLogger(__name__).info("%s", event.model_dump_json())
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    return show


def describe(event: BusEvent) -> str:
    """One short line a person can read."""
    now = datetime.now().strftime("%H:%M:%S")
    return f"{now} {_what(event)}"


def _what(event: BusEvent) -> str:
    match event:
        case SessionsChanged():
            parts = []
            if event.conversation_ids:
                parts.append(f"sessions changed: {_ids(event.conversation_ids)}")
            if event.removed:
                parts.append(f"removed: {_ids(event.removed)}")
            return "; ".join(parts)
        case RunsChanged():
            return f"runs changed: {_ids(event.run_ids)}"
        case WatchStatus():
            role = "leader" if event.leader else "follower"
            why = f" — {event.reason}" if event.reason else ""
            return f"{role}; transcripts: {event.transcripts}{why}"
        case RunOutput() | RunActivity():
            return event.kind
        case _:
            # deferred: the words of every event kind are for the lines printed
            from core.event_text.catalog import describe

            return describe(event).line


def _ids(ids: tuple[str, ...]) -> str:
    from core.event_text.words import shown_id

    shown = ", ".join(shown_id(i) for i in ids[:IDS_SHOWN])
    more = len(ids) - IDS_SHOWN
    return f"{shown} (+{more})" if more > 0 else shown
