"""The worker process of a detached run: ``python -m core.detached_worker --data-dir=DIR``.

Started by :func:`core.detached.spawn_worker` in a session of its own, it
waits for its go message on stdin (the caller records the run first, owned by
this process), drives the run through the ordinary orchestrator path, and
exits. SIGTERM, SIGINT and SIGHUP cancel the run (``delegate sessions stop``
sends SIGTERM): it is stored ``cancelled`` with its partial reply. An empty
stdin means the caller gave up before recording anything: nothing to do.
Its output (warnings, a bug's traceback) goes to ``detached.log`` in the data
folder.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from core.detached import GoMessage
from core.errors import DelegateError
from core.orchestrator import AgentOrchestrator
from core.supervisor.turn_end import judge_turns

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

log = logging.getLogger("core.detached_worker")
# A stop that arrives before the run started (the store still opening) is kept
# and honoured as soon as there is a run to cancel.
_early_stops: list[int] = []


def _remember_stop(signum: int, _frame: object) -> None:
    _early_stops.append(signum)


async def drive(data_dir: Path, go: GoMessage) -> int:
    """Run the recorded run to its end; 0 when it completed."""
    orch = await AgentOrchestrator.open(data_dir, settings=go.settings)
    try:
        # No supervisor may be running: the turn acts on the levels it crosses when it ends.
        judge_turns(orch)
        handle = await orch.start_detached(go)
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, handle.cancel)
        if _early_stops:
            handle.cancel()
        run = await handle.wait()
        log.info("run %s %s", run.run_id, run.status.value)
        return 0 if run.status.value == "completed" else 1
    finally:
        await orch.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.detached_worker")
    parser.add_argument("--data-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s detached worker %(process)d %(levelname)s %(message)s",
    )
    for sig in STOP_SIGNALS:
        signal.signal(sig, _remember_stop)
    # The caller abandons a run it could not record by closing stdin unwritten.
    raw = sys.stdin.buffer.read()
    if not raw:
        return 0
    try:
        go = GoMessage.decode(raw)
    except ValueError as exc:
        log.error("%s", exc)
        return 1
    try:
        return asyncio.run(drive(args.data_dir, go))
    except DelegateError as exc:
        log.error("run %s: %s: %s", go.run_id, exc.code, exc.message)
        return 1


if __name__ == "__main__":
    sys.exit(main())
