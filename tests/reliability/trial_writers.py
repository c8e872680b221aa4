"""The store under concurrent writers, and replaced or removed under a running watch.

Writer rounds: 3..7 real ``delegate`` processes at once on one store, each a
follow-up, a launch, an import, an archive or a restore, a rename or a listing
of the same few sessions. Each has a timeout (a hang is counted as one, with
the stacks of its threads); each ends with success or a typed error (a race
lost is ``agent_busy``, a store held too long ``store_busy``); after each round
``integrity_check`` is ok.

Replacement trials: a ``delegate watch`` holds the store; a backup made with
``delegate store backup`` is copied (``cp``) or moved (``mv``) over it, or the
file is removed. Then a writing command must not be accepted into a replaced
file (``store_replaced``; after a removal a fresh store is fine), the watch must
stop with the typed error, the replaced file must stay byte for byte the backup,
and ``delegate store restore`` must then put it back: integrity ok, the backup's
sessions there, commands working.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from reliability_support import (
    Cli,
    CliResult,
    Tally,
    cli_problem,
    integrity,
    new_tag,
    survivors,
    timed,
)

from core.config import DB_FILENAME

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
STEP_TIMEOUT_S = 120.0
WATCH_STOP_S = 20.0
SESSIONS = 4
# Every child writes its threads' stacks on SIGABRT: a hang is then reported with
# where it waited.
FAULT_ENV = {"PYTHONFAULTHANDLER": "1"}


def _wait(cli: Cli, timeout: float) -> CliResult:
    """``cli``'s outcome; past ``timeout`` its stacks are taken (SIGABRT), then it is killed."""
    try:
        cli.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        cli.send_signal(signal.SIGABRT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            cli.proc.wait(timeout=5)
        out, err = cli.output()
        cli.wait(1)
        return CliResult(None, out, err)
    return cli.wait(1)


def _ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        rows = conn.execute(
            "SELECT conversation_id FROM sessions WHERE source = 'delegate' ORDER BY 1"
        ).fetchall()
    return [str(r[0]) for r in rows]


def _seed(work: Path, data: Path) -> list[str]:
    """A store with a few delegate sessions and the real transcripts imported."""
    shutil.rmtree(data, ignore_errors=True)
    tag = new_tag()
    for n in range(SESSIONS):
        args = ["--data-dir", str(data), "run", "--agent", "echo", f"seed {n}"]
        cli = Cli(args, home=work, tag=tag)
        result = _wait(cli, STEP_TIMEOUT_S)
        assert result.code == 0, result.text
    return _ids(data / DB_FILENAME)


def _op(rng: random.Random, ids: list[str], round_no: int, i: int) -> tuple[list[str], bool]:
    """One writer's command line (after ``--data-dir``), and whether it prints JSON."""
    target = rng.choice(ids)
    kind = rng.choice(
        ["follow-up", "follow-up", "launch", "import", "archive", "restore", "rename", "list"]
    )
    if kind == "follow-up":
        return ["run", "--json", "--session", target, f"round {round_no} writer {i}"], True
    if kind == "launch":
        return ["run", "--json", "--agent", "echo", f"new {round_no}.{i}"], True
    if kind == "import":
        return [
            "import",
            "--json",
            "--claude-dir",
            str(REALDATA / "claude"),
            "--codex-dir",
            str(REALDATA / "codex"),
        ], True
    if kind == "archive":
        return ["sessions", "dismiss", "--json", target], True
    if kind == "restore":
        return ["sessions", "restore", "--json", target], True
    if kind == "rename":
        return ["sessions", "rename", "--json", target, f"name {round_no}.{i}"], True
    return ["sessions", "list", "--json", "--limit", "20"], True


def writer_rounds(work: Path, rounds: int, *, seed: int = 29) -> Tally:
    """``rounds`` rounds of 3..7 writers on one store; see the module doc."""
    rng = random.Random(seed)
    tally = Tally("concurrent writers (3..7 processes)")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        data = work / "writers"
        ids = _seed(work, data)
        db = data / DB_FILENAME
        busy = 0
        for round_no in range(rounds):
            if tally.out_of_time():
                break
            count = rng.randint(3, 7)
            tally.trials += 1
            tally.faults += count - 1
            where = f"round {round_no} ({count} writers)"
            tag = new_tag()
            commands = [_op(rng, ids, round_no, i) for i in range(count)]
            clis = [
                Cli(["--data-dir", str(data), *args], home=work, tag=tag, env=FAULT_ENV)
                for args, _ in commands
            ]
            results = [_wait(cli, STEP_TIMEOUT_S) for cli in clis]
            tally.add_survivors(survivors(tag, grace_s=5.0), where)
            for (args, json_out), result in zip(commands, results, strict=True):
                what = f"{where}: delegate {' '.join(args)[:70]}"
                if result.hung:
                    tally.hang(f"{what}: {result.text[-500:]!r}")
                    continue
                problem = cli_problem(result, json_out=json_out)
                if problem:
                    tally.lose(f"{what}: {problem}")
                if "store_busy" in result.text:
                    busy += 1
            check = integrity(db)
            if check != "ok":
                tally.lose(f"{where}: integrity_check: {check}")
            tally.progress()
        if busy:
            tally.note(f"{busy} writers answered store_busy (a typed error, counted as fine)")
    return tally


# --- replaced or removed under a running watch ----------------------------------

HOW = ("cp", "mv", "rm")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _cli(work: Path, data: Path, tag: str, *args: str) -> CliResult:
    cli = Cli(["--data-dir", str(data), *args], home=work, tag=tag, env=FAULT_ENV)
    return _wait(cli, STEP_TIMEOUT_S)


def _count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


def replacement_trials(work: Path, trials: int, *, seed: int = 31) -> Tally:
    """``trials`` replacements (cp, mv, rm in turn) under a running watch."""
    rng = random.Random(seed)
    tally = Tally("store replaced or removed under a watch")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        for trial in range(trials):
            if tally.out_of_time():
                break
            how = HOW[trial % len(HOW)]
            tally.trials += 1
            tally.faults += 1
            where = f"trial {trial} ({how})"
            tag = new_tag()
            try:
                _replacement(tally, work, how, rng, where, tag)
            finally:
                tally.add_survivors(survivors(tag, grace_s=5.0), where)
            tally.progress()
    return tally


def _replacement(
    tally: Tally, work: Path, how: str, rng: random.Random, where: str, tag: str
) -> None:
    data = work / "replaced"
    ids = _seed(work, data)
    db = data / DB_FILENAME
    backup = work / "backup.sqlite3"
    backup.unlink(missing_ok=True)
    result = _cli(work, data, tag, "store", "backup", str(backup))
    if result.code != 0:
        tally.lose(f"{where}: store backup failed: {result.text[-300:]!r}")
        return
    in_backup = _count(backup)
    watch = Cli(
        ["--data-dir", str(data), "watch", "--no-transcripts"], home=work, tag=tag, env=FAULT_ENV
    )
    try:
        time.sleep(1.5)  # the watch holds the store
        for n in range(rng.randint(1, 3)):  # more in the log than in the backup
            result = _cli(work, data, tag, "run", "--json", "--session", rng.choice(ids), f"m{n}")
            if problem := cli_problem(result, json_out=True):
                tally.lose(f"{where}: a follow-up before the replacement: {problem}")
        if how == "cp":
            shutil.copyfile(backup, db)
        elif how == "mv":
            moving = data / "moving"
            shutil.copyfile(backup, moving)
            os.replace(moving, db)
        else:
            db.unlink()
        replaced_digest = _digest(db)
        if how == "rm":  # a fresh store: a launch, not a rename of a session it lacks
            result = _cli(work, data, tag, "run", "--json", "--agent", "echo", "after")
        else:
            result = _cli(work, data, tag, "sessions", "rename", "--json", ids[0], "after")
        if problem := cli_problem(result, json_out=True):
            tally.lose(f"{where}: a write after it: {problem}")
        elif how != "rm" and result.code == 0:
            tally.lose(f"{where}: a write was accepted into the replaced file")
        elif how != "rm" and "store_replaced" not in result.text:
            tally.lose(f"{where}: a write after it did not say store_replaced: {result.text!r}")
        elif how == "rm" and result.code != 0:
            tally.lose(f"{where}: a write after removal did not start fresh: {result.text!r}")
        watched = _wait(watch, WATCH_STOP_S)
        if watched.hung:
            tally.hang(f"{where}: the watch did not notice the store was {how}")
        elif "store_replaced" not in watched.text and "store_removed" not in watched.text:
            tally.lose(f"{where}: the watch ended without saying why: {watched.text[-300:]!r}")
        if how != "rm" and _digest(db) != replaced_digest:
            tally.lose(f"{where}: the replaced file was written to")
    finally:
        if watch.poll() is None:  # not ended by the trial's own wait
            watch.send_signal(signal.SIGTERM)
            _wait(watch, WATCH_STOP_S)
    if how != "rm":
        result = _cli(work, data, tag, "store", "restore", str(backup))
        if result.code != 0:
            tally.lose(f"{where}: store restore failed: {result.text[-300:]!r}")
            return
        if _count(db) != in_backup:
            tally.lose(f"{where}: restored {_count(db)} sessions, the backup has {in_backup}")
    result = _cli(work, data, tag, "run", "--json", "--agent", "echo", "after restore")
    if result.code != 0:
        tally.lose(f"{where}: a launch afterwards failed: {result.text[-300:]!r}")
    check = integrity(db)
    if check != "ok":
        tally.lose(f"{where}: integrity_check: {check}")


def writers_trials(work: Path, rounds: int, replacements: int) -> Tally:
    """Both kinds, as one category (``writers``)."""
    tally = Tally("writers: concurrent writers, replaced and removed stores")
    tally.merge(writer_rounds(work / "rounds", rounds))
    tally.merge(replacement_trials(work / "replace", replacements))
    return tally
