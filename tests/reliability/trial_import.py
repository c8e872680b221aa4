"""Kill or signal ``delegate import`` at random points; the store must stay whole.

Each trial starts ``delegate import`` of the benchmark corpus into an empty
store, delivers the signal after a random delay (uniform over a clean import's
duration), then checks:

- the process ended (SIGTERM / SIGINT: by itself, within the timeout);
- nothing it started is left (forkserver, resource tracker, pool workers);
- ``PRAGMA integrity_check`` is ok;
- a re-import ends with exactly the sessions of a clean import.
"""

from __future__ import annotations

import random
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliability_support import (
    Cli,
    Tally,
    integrity,
    new_tag,
    run_cli,
    session_rows,
    survivors,
    timed,
)

from core.config import DB_FILENAME

BENCH = Path(__file__).resolve().parents[1] / "bench"
SIGNAL_EXIT_S = 30.0  # SIGTERM / SIGINT: the import must be gone by then


def build_corpus(root: Path, copies: int) -> Path:
    """The benchmark's corpus (13 real sessions x ``copies``), built once and reused."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    from bench_import import build_corpus as build

    build(root, copies, lambda _line: None)
    return root


def import_args(data: Path, corpus: Path) -> list[str]:
    return [
        "--data-dir",
        str(data),
        "import",
        "--json",
        "--claude-dir",
        str(corpus / "claude"),
        "--codex-dir",
        str(corpus / "codex"),
    ]


@dataclass
class Reference:
    """A clean import: its sessions and how long it took (the kill window)."""

    rows: list[tuple[Any, ...]]
    seconds: float


def clean_import(corpus: Path, work: Path) -> Reference:
    data = work / "reference"
    shutil.rmtree(data, ignore_errors=True)
    started = time.monotonic()
    tag = new_tag()
    result = run_cli(import_args(data, corpus), home=work, tag=tag, timeout=600)
    seconds = time.monotonic() - started
    survivors(tag)  # counted by the trials; a clean run must not leave them for the first one
    assert result.code == 0, f"the clean import failed: {result.text[-2000:]}"
    rows = session_rows(data / DB_FILENAME)
    assert rows, "the clean import found no sessions"
    return Reference(rows, seconds)


def _diff(expected: list[tuple[Any, ...]], got: list[tuple[Any, ...]]) -> str:
    want, have = set(expected), set(got)
    ids = [r[0] for r in got]
    dupes = len(ids) - len(set(ids))
    return (
        f"{len(want - have)} missing, {len(have - want)} extra or different,"
        f" {dupes} duplicated (of {len(expected)})"
    )


def import_signal_trials(
    corpus: Path,
    work: Path,
    trials: int,
    *,
    signals: tuple[signal.Signals, ...] = (signal.SIGKILL,),
    seed: int = 7,
    reference: Reference | None = None,
    kind: str = "import kill -9",
    fractions: Sequence[float] = (),
) -> Tally:
    """``trials`` imports, each signalled once at a random point; see the module doc.

    ``fractions``: signal at these fractions of a clean import's duration
    instead (one per trial, cycled), for a deterministic run.
    """
    rng = random.Random(seed)
    tally = Tally(kind)
    with timed(tally):
        ref = reference or clean_import(corpus, work)
        window = ref.seconds
        for trial in range(trials):
            if tally.out_of_time():
                break
            if trial:
                tally.progress()
            sig = signals[trial % len(signals)]
            data = work / "trial"
            shutil.rmtree(data, ignore_errors=True)
            tag = new_tag()
            tally.trials += 1
            where = f"trial {trial} ({sig.name})"
            proc = Cli(import_args(data, corpus), home=work, tag=tag)
            at = fractions[trial % len(fractions)] if fractions else rng.random()
            time.sleep(at * window)
            if proc.poll() is None:
                proc.send_signal(sig)
                tally.faults += 1
            if proc.wait(SIGNAL_EXIT_S).hung:
                tally.hang(f"{where}: the import was still running {SIGNAL_EXIT_S:.0f} s on")
            tally.add_survivors(survivors(tag), where)
            check = integrity(data / DB_FILENAME)
            if check != "ok":
                tally.lose(f"{where}: integrity_check: {check}")
                continue
            again_tag = new_tag()
            again = run_cli(
                import_args(data, corpus), home=work, tag=again_tag, timeout=max(120, 6 * window)
            )
            tally.add_survivors(survivors(again_tag), f"{where}, re-import")
            if again.hung:
                tally.hang(f"{where}: the re-import hung")
                continue
            if again.code != 0:
                tally.lose(f"{where}: the re-import failed: {again.text[-300:]!r}")
                continue
            rows = session_rows(data / DB_FILENAME)
            if rows != ref.rows:
                tally.lose(f"{where}: re-import: {_diff(ref.rows, rows)}")
    return tally
