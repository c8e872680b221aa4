"""Processes racing one session, and imports racing one store.

Follow-up races: 2..8 long-lived racer processes (``racer.py``) get the same
follow-up at the same instant each round; exactly one wins, the others get
``agent_busy``, and exactly one run is recorded. The winner's run is held by a gate
until the others have answered, so a racer the machine schedules late still races.

Import races: 2..4 ``delegate import`` processes of the same trees start
together on an empty store; all succeed (no ``database is locked`` escapes)
and the store ends with exactly the sessions of a clean import, none
duplicated or lost.
"""

from __future__ import annotations

import contextlib
import json
import random
import select
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from reliability_support import (
    Cli,
    Tally,
    new_tag,
    session_rows,
    states,
    survivors,
    tagged_env,
    timed,
)
from support import write_config
from trial_import import clean_import, import_args

from core.config import DB_FILENAME

RACER = Path(__file__).with_name("racer.py")
ROOT = Path(__file__).resolve().parents[2]
ROUND_TIMEOUT_S = 60.0
IMPORT_TIMEOUT_S = 300.0
# The winner's run stops after its first word until the gate file appears, and the
# gate opens only once every other racer has answered: however slowly a loaded
# machine schedules a racer, it tries while the winner holds the session. (Timing
# alone, a run of ~0.5 s, let a racer scheduled later win a second, legal turn.)
RACER_DELAY = 0.01
GATE_NAME = "race-gate"
# How long the others get to answer busy; only a second winner, held by the gate
# too, makes the round wait this long.
OTHERS_TIMEOUT_S = 30.0


class RacerGone(Exception):
    """A racer exited before a round reached it: the round cannot be judged."""


def _racers(work: Path, data: Path, count: int, tag: str) -> list[subprocess.Popen[str]]:
    env = tagged_env(work, tag, {"PYTHONPATH": str(ROOT)})
    racers = []
    for i in range(count):
        # Each racer's stderr is kept in a file: a racer that dies says why.
        with open(work / f"racer-{i}.stderr", "wb") as stderr:
            racers.append(
                subprocess.Popen(
                    [sys.executable, str(RACER), str(data)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    cwd=work,
                    env=env,
                )
            )
    return racers


def _gone(work: Path, racers: list[subprocess.Popen[str]]) -> str | None:
    """Which racers have exited, with their exit status and the tail of their stderr."""
    dead = []
    for i, racer in enumerate(racers):
        code = racer.poll()
        if code is None:
            continue
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        tail = (work / f"racer-{i}.stderr").read_text(errors="replace")[-400:].strip()
        dead.append(f"racer {i} ({how}; stderr: {tail or 'empty'!r})")
    return "; ".join(dead) or None


def _answers(
    racers: list[subprocess.Popen[str]], timeout: float, enough: int | None = None
) -> dict[int, dict[str, object]] | None:
    """An answer line per racer (by index), or only the first ``enough`` of them; None
    if they took longer than ``timeout`` (with ``enough``: the answers so far)."""
    answers: dict[int, dict[str, object]] = {}
    deadline = time.monotonic() + timeout
    wanted = len(racers) if enough is None else enough
    while len(answers) < wanted:
        waiting = [r for i, r in enumerate(racers) if i not in answers]
        left = deadline - time.monotonic()
        if left <= 0:
            return answers if enough is not None else None
        ready, _, _ = select.select([r.stdout for r in waiting], [], [], left)
        for i, racer in enumerate(racers):
            if racer.stdout in ready and i not in answers:
                line = racer.stdout.readline() if racer.stdout else ""
                answers[i] = json.loads(line) if line else {"exited": racer.wait()}
    return answers


def _run_count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def follow_up_races(work: Path, rounds: int, *, seed: int = 13) -> Tally:
    """``rounds`` rounds of 2..8 racers; see the module doc."""
    rng = random.Random(seed)
    tally = Tally("follow-up races (2..8 processes)")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        data = work / "race-data"
        shutil.rmtree(data, ignore_errors=True)
        gate = work / GATE_NAME
        script = work / "racer-script.json"
        rule = {"match": ".", "reply": "[race] turn {turn}", "gate": str(gate)}
        script.write_text(json.dumps({"rules": [rule]}))
        write_config(
            data,
            f'\n[agents.racer]\nrunner = "scripted"\ndelay = {RACER_DELAY}\nscript = "{script}"\n',
        )
        tag = new_tag()
        racers = _racers(work, data, 8, tag)
        try:
            try:
                first = _racers_round(racers[:1], {"agent_id": "racer", "prompt": "hello"}, gate)
            except RacerGone:
                first = None
            assert first, f"no first turn: {_gone(work, racers)}"
            assert first[0].get("status") == "ok", f"no first turn: {first}"
            conversation = str(first[0]["conversation_id"])
            db = data / DB_FILENAME
            for round_no in range(rounds):
                if tally.out_of_time():
                    break
                count = rng.randint(2, 8)
                tally.trials += 1
                tally.faults += count - 1
                where = f"round {round_no} ({count} racers)"
                before = _run_count(db)
                request = {"conversation_id": conversation, "prompt": f"race round {round_no}"}
                try:
                    answers = _racers_round(racers[:count], request, gate)
                except RacerGone:
                    tally.lose(f"{where}: {_gone(work, racers)}")
                    break  # a round without all its racers proves nothing
                if answers is None:
                    tally.hang(f"{where}: no answer within {ROUND_TIMEOUT_S:.0f} s")
                    break  # the racers are in an unknown state: stop rather than mis-count
                _judge_round(tally, where, answers, _run_count(db) - before)
                stuck = {c: s for c, s in states(db).items() if s != "idle"}
                if stuck:
                    tally.lose(f"{where}: sessions not idle after the round: {stuck}")
        finally:
            for racer in racers:
                with contextlib.suppress(OSError):
                    if racer.stdin:
                        racer.stdin.close()
            for racer in racers:
                try:
                    racer.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    racer.kill()
                    racer.wait()
            for racer in racers:
                if racer.stdout:
                    racer.stdout.close()
            tally.add_survivors(survivors(tag), "the racers exited")
    return tally


def _racers_round(
    racers: list[subprocess.Popen[str]], request: dict[str, object], gate: Path
) -> list[dict[str, object]] | None:
    """Every racer's answer: the gate opens once all but one have answered (or after
    ``OTHERS_TIMEOUT_S``, when two hold the gate: a second winner)."""
    gate.unlink(missing_ok=True)
    line = json.dumps(request) + "\n"
    if any(racer.poll() is not None for racer in racers):
        raise RacerGone
    for racer in racers:  # released together: one write each, no waiting in between
        assert racer.stdin is not None
        try:
            racer.stdin.write(line)
            racer.stdin.flush()
        except BrokenPipeError:  # exited since the check above
            gate.touch()  # a run the racers before it started ends, rather than waits
            raise RacerGone from None
    answers = _answers(racers, OTHERS_TIMEOUT_S, enough=len(racers) - 1)
    gate.touch()
    if answers is None:
        return None
    remaining = [i for i in range(len(racers)) if i not in answers]
    rest = _answers([racers[i] for i in remaining], ROUND_TIMEOUT_S)
    if rest is None:
        return None
    answers.update((i, rest[j]) for j, i in enumerate(remaining))
    return [answers[i] for i in range(len(racers))]


def _judge_round(tally: Tally, where: str, answers: list[dict[str, object]], new_runs: int) -> None:
    winners = [a for a in answers if a.get("status") == "ok"]
    busy = [a for a in answers if (a.get("error") or {}).get("code") == "agent_busy"]  # type: ignore[union-attr]
    others = [a for a in answers if a not in winners and a not in busy]
    if len(winners) != 1 or others or new_runs != 1:
        tally.lose(
            f"{where}: {len(winners)} won, {len(busy)} busy, {new_runs} runs recorded,"
            f" others: {json.dumps(others)[:300]}"
        )
    elif winners[0].get("run_status") != "completed":
        tally.lose(f"{where}: the winner's run did not complete: {json.dumps(winners[0])[:300]}")


def import_races(corpus: Path, work: Path, trials: int, *, seed: int = 17) -> Tally:
    """``trials`` races of 2..4 imports of the same trees; see the module doc."""
    rng = random.Random(seed)
    tally = Tally("import races (2..4 processes)")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        ref = clean_import(corpus, work)
        for trial in range(trials):
            if tally.out_of_time():
                break
            count = rng.randint(2, 4)
            where = f"trial {trial} ({count} imports)"
            tally.trials += 1
            tally.faults += count - 1
            data = work / "race-import"
            shutil.rmtree(data, ignore_errors=True)
            tag = new_tag()
            procs = [Cli(import_args(data, corpus), home=work, tag=tag) for _ in range(count)]
            results = [p.wait(IMPORT_TIMEOUT_S) for p in procs]
            tally.add_survivors(survivors(tag), where)
            if any(r.hung for r in results):
                tally.hang(f"{where}: an import hung")
                continue
            failed = [r.text[-300:] for r in results if r.code != 0 or "locked" in r.text]
            if failed:
                tally.lose(f"{where}: {len(failed)} imports failed: {failed[0]!r}")
            rows = session_rows(data / DB_FILENAME)
            if rows != ref.rows:
                ids = [r[0] for r in rows]
                tally.lose(
                    f"{where}: {len(rows)} sessions ({len(ids) - len(set(ids))} duplicated),"
                    f" a clean import has {len(ref.rows)}"
                )
    return tally
