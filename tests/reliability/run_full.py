"""The full reliability run: every kind of trial at its full count, then a figures table.

Usage::

    uv run python tests/reliability/run_full.py                     # everything
    uv run python tests/reliability/run_full.py --only import-kill --only races
    uv run python tests/reliability/run_full.py --scale 0.25        # a quarter of each count
    uv run python tests/reliability/run_full.py --work-dir DIR      # keep the corpus for reruns
    uv run python tests/reliability/run_full.py --category hooks    # the kinds of a category

A second table adds up trials and bad outcomes per fault category (steering,
clocks, full disk, secrets, hooks, writers). Exit status 1 if any kind has a
hang, a survivor or a loss. The corpus (the
import benchmark's 3,900 files) is built once under the work folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for entry in (ROOT, HERE.parent, HERE):  # run as a script: core, tests/support, the trials
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from reliability_support import Tally, set_deadline  # noqa: E402
from trial_clocks import clock_trials  # noqa: E402
from trial_full_disk import full_disk_trials  # noqa: E402
from trial_hooks_handlers import hook_handler_trials  # noqa: E402
from trial_hooks_install import hooks_install_trials  # noqa: E402
from trial_import import build_corpus, clean_import, import_signal_trials  # noqa: E402
from trial_inputs import cli_inputs, importer_inputs, tool_inputs  # noqa: E402
from trial_race import follow_up_races, import_races  # noqa: E402
from trial_run import run_signal_trials  # noqa: E402
from trial_secrets import secret_trials  # noqa: E402
from trial_steering import steering_trials  # noqa: E402
from trial_store import store_trials  # noqa: E402
from trial_trees import tree_trials  # noqa: E402
from trial_writers import writers_trials  # noqa: E402

FULL_COPIES = 300  # the benchmark corpus: 13 real sessions x 300 = 3,900 files
RACE_COPIES = 8


def _count(n: int, scale: float) -> int:
    return max(1, round(n * scale))


def kinds(work: Path, scale: float) -> dict[str, Callable[[], Tally]]:
    """Each kind of trial at its full count (times ``scale``)."""
    corpus = work / "corpus"
    small = work / "corpus-small"

    def import_kill() -> Tally:
        build_corpus(corpus, FULL_COPIES)
        ref = clean_import(corpus, work / "import")
        return import_signal_trials(corpus, work / "import", _count(100, scale), reference=ref)

    def import_signals() -> Tally:
        build_corpus(corpus, FULL_COPIES)
        ref = clean_import(corpus, work / "import-signals")
        return import_signal_trials(
            corpus,
            work / "import-signals",
            _count(20, scale),
            signals=(signal.SIGTERM, signal.SIGINT),
            reference=ref,
            kind="import SIGTERM / SIGINT",
        )

    def run_signals() -> Tally:
        return run_signal_trials(work / "run", _count(105, scale), kind="follow-up signals")

    def run_signals_cli() -> Tally:
        return run_signal_trials(
            work / "run-cli", _count(30, scale), agent="standin", kind="follow-up signals (CLI)"
        )

    def races() -> Tally:
        return follow_up_races(work / "races", _count(200, scale))

    def import_race() -> Tally:
        build_corpus(small, RACE_COPIES)
        return import_races(small, work / "import-races", _count(30, scale))

    def inputs() -> Tally:
        tally = Tally("hostile inputs (tools, CLI, importers)")
        tally.merge(asyncio.run(tool_inputs(work / "inputs")))
        tally.merge(cli_inputs(work / "inputs"))
        tally.merge(asyncio.run(importer_inputs(work / "inputs")))
        return tally

    def trees() -> Tally:
        return tree_trials(work / "trees")

    def stores() -> Tally:
        return store_trials(work / "stores")

    def steering() -> Tally:
        return steering_trials(work / "steering", _count(5, scale))

    def clocks() -> Tally:
        return clock_trials(work / "clocks", scale)

    def full_disk() -> Tally:
        return full_disk_trials(work / "full-disk")

    def hooks_handlers() -> Tally:
        return hook_handler_trials(work / "hooks", _count(5, scale))

    def secrets() -> Tally:
        return secret_trials(work / "secrets")

    def writers() -> Tally:
        return writers_trials(work / "writers", _count(182, scale), _count(18, scale))

    return {
        "import-kill": import_kill,
        "import-signals": import_signals,
        "run-signals": run_signals,
        "run-signals-cli": run_signals_cli,
        "races": races,
        "import-races": import_race,
        "inputs": inputs,
        "trees": trees,
        "stores": stores,
        "hooks-install": lambda: hooks_install_trials(
            work / "hooks-install", _count(1500, scale), _count(4, scale)
        ),
        "steering": steering,
        "clocks": clocks,
        "full-disk": full_disk,
        "hooks-handlers": hooks_handlers,
        "secrets": secrets,
        "writers": writers,
    }


CATEGORIES: dict[str, tuple[str, ...]] = {
    "steering": ("steering",),
    "clocks": ("clocks",),
    "full-disk": ("full-disk",),
    "secrets": ("secrets",),
    "hooks": ("hooks-install", "hooks-handlers"),
    "writers": ("writers",),
}
"""The fault categories of the second round of reliability trials, each one kind or more."""


def category_table(tallies: dict[str, Tally]) -> str:
    """Trials and bad outcomes (hangs + survivors + losses) per category that ran."""
    rows = ["| category | trials | bad outcomes |", "|---|---:|---:|"]
    for category, names in CATEGORIES.items():
        ran = [tallies[name] for name in names if name in tallies]
        if not ran:
            continue
        trials = sum(t.trials for t in ran)
        bad = sum(t.hangs + t.survivors + t.losses for t in ran)
        rows.append(f"| {category} | {trials} | {bad} |")
    return "\n".join(rows) if len(rows) > 2 else ""


def table(tallies: list[Tally]) -> str:
    rows = [
        "| kind | trials | faults | hangs | survivors | losses | wall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in tallies:
        rows.append(
            f"| {t.kind} | {t.trials} | {t.faults} | {t.hangs} | {t.survivors} | {t.losses}"
            f" | {t.wall_s:.0f} s |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", metavar="KIND", help="run only these kinds")
    parser.add_argument(
        "--category",
        action="append",
        choices=sorted(CATEGORIES),
        help="run only the kinds of these categories (steering, clocks, full-disk, ...)",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every count (1.0)")
    parser.add_argument("--work-dir", type=Path, help="corpus and stores (default: a temp dir)")
    parser.add_argument(
        "--minutes",
        type=float,
        help="time budget: trials stop starting after it (each tally says how many ran)",
    )
    args = parser.parse_args(argv)
    if args.minutes is not None:
        set_deadline(time.time() + args.minutes * 60)

    def run(work: Path) -> int:
        available = kinds(work, args.scale)
        picked = list(args.only or [])
        for category in args.category or []:
            picked += [k for k in CATEGORIES[category] if k not in picked]
        chosen = picked or list(available)
        unknown = set(chosen) - set(available)
        if unknown:
            parser.error(f"unknown kinds {sorted(unknown)}; choose from {sorted(available)}")
        started = time.monotonic()
        print(
            f"reliability run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {os.cpu_count()} cores"
            f" (nproc) · Python {platform.python_version()} · scale {args.scale}",
            flush=True,
        )
        tallies: dict[str, Tally] = {}
        for name in chosen:
            tally = available[name]()
            print(tally.summary(), flush=True)
            tallies[name] = tally
        print()
        print(table(list(tallies.values())))
        by_category = category_table(tallies)
        if by_category:
            print()
            print(by_category)
        print(f"\nwall time {time.monotonic() - started:.0f} s")
        return 0 if all(t.clean for t in tallies.values()) else 1

    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        return run(args.work_dir)
    with tempfile.TemporaryDirectory(prefix="delegate-reliability-") as tmp:
        return run(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
