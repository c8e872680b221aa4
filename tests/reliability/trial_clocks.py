"""Clocks: wall-clock steps during runs and leader hand-overs, and runs of another host.

Three sets of trials:

- ``steps``: a real ``delegate watch`` leads while a real ``delegate run`` runs;
  the watch's wall clock is stepped (forward or back, seconds to a day) through
  libfaketime. Loss: the live run interrupted (or ``delegate run`` not exiting 0
  once released). Every other trial the owner is then stopped (SIGSTOP): loss
  if the watch does not interrupt it within the grace period and a margin (a
  step back must not make a hung owner look alive). Without libfaketime the
  judge is an in-process orchestrator given the stepped clock.
- ``leases``: supervisors whose wall clocks differ by a step hand the lease over
  (injected clocks, many sizes); with libfaketime also real ``watch`` processes:
  the leader, its clock stepped, is killed and another must lead within the
  lease's term. Loss: a lease stranded beyond its term, or taken before it.
- ``foreign``: a run of another host in flight, its heartbeat old (its host went
  away) or fresh (it runs), met by each command. Loss: a command refused or a
  session left ``running`` because of the dead run; a beating run interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import signal
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

from gated import GATED_SCRIPT, stop_between_writes
from reliability_support import Cli, Tally, new_tag, run_cli, survivors, timed
from support import write_config

from core.clock import Clocks, MonoStamp, clock_id, system_clock, system_mono, to_us
from core.config import DB_FILENAME
from core.models import RunKind
from core.process_identity import ProcessIdentity
from core.store import NewRun, Store
from core.supervisor.leader import Leadership

LIBFAKETIME = next(
    (
        p
        for p in (
            Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"),
            Path("/usr/lib/faketime/libfaketimeMT.so.1"),
        )
        if p.is_file()
    ),
    None,
)
STEPS_S = (40, -7_200, 3_600, -120, 120, -86_400, 86_400, -31, 31, -5, 5)
GRACE_S = 6.0  # run_grace_seconds in the trials' config: a hung owner is found quickly
LEASE_TTL_S = 10.0  # delegate watch's lease term
WAIT_S = 30.0
ELSEWHERE = ProcessIdentity(
    host="elsewhere", host_id="boot:0f0f0f0f-other-host/pid:[4026531836]", pid=4242, started=7
)


def _data_dir(work: Path) -> tuple[Path, Path]:
    """A data folder with a ``gated`` agent (released by the returned gate file)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    gate = work / "go"
    script = work / "gated.toml"
    script.write_text(GATED_SCRIPT.format(gate=gate), encoding="utf-8")
    data = write_config(
        work / "data", f'\n[agents.gated]\nrunner = "scripted"\nscript = "{script}"\n'
    )
    config = data / "config.toml"  # a top-level key goes before the agents' tables
    config.write_text(
        f"run_grace_seconds = {GRACE_S}\n" + config.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return data, gate


def _query(data: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with sqlite3.connect(data / DB_FILENAME, timeout=10) as db:
        return list(db.execute(sql, params).fetchall())


def _until(check: Callable[[], object], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def _told(run: Cli) -> str:
    """What a run that never started said (its last words), for the trial's note."""
    out, err = run.output()
    return (out + err).decode(errors="replace").strip()[-200:] or "nothing"


def _faked(offset: Path) -> dict[str, str]:
    return {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(offset),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def _watch(data: Path, home: Path, tag: str, offset: Path) -> Cli:
    empty = home / "none"
    empty.mkdir(parents=True, exist_ok=True)
    args = ["--data-dir", str(data), "watch", "--json"]
    args += ["--claude-dir", str(empty), "--codex-dir", str(empty)]
    return Cli(args, home=home, tag=tag, env=_faked(offset))


def _end(proc: Cli | None) -> None:
    """Kill ``proc`` if it still runs, and close its output (once: a waited one is closed)."""
    if proc is None:
        return
    proc.send_signal(signal.SIGKILL)
    with contextlib.suppress(ValueError):  # waited for already
        proc.wait(10)


def _leads(watch: Cli) -> bool:
    """Whether the watch's last ``watch_status`` line says it leads."""
    leader = None
    for line in watch.output()[0].decode(errors="replace").splitlines():
        if '"kind":"watch_status"' in line.replace(" ", ""):
            leader = json.loads(line).get("leader")
    return leader is True


# --- steps during a live run ---------------------------------------------------


def _step_trial(work: Path, tally: Tally, step_s: int, hang: bool) -> None:
    data, gate = _data_dir(work)
    tag = new_tag()
    offset = work / "offset"
    offset.write_text("+0\n", encoding="ascii")
    watch = _watch(data, work, tag, offset)
    run = Cli(["--data-dir", str(data), "run", "--agent", "gated", "explain"], home=work, tag=tag)
    try:
        if not _until(lambda: _leads(watch), WAIT_S):
            tally.hang(f"step {step_s:+d}: the watch never led")
            return
        if not _until(lambda: _query(data, "SELECT status FROM runs") == [("running",)], WAIT_S):
            tally.hang(f"step {step_s:+d}: the run never started: {_told(run)}")
            return
        offset.write_text(f"{step_s:+d}\n", encoding="ascii")
        tally.faults += 1
        time.sleep(2.5)  # the watch ticks every second
        if hang:
            stop_between_writes(run.proc, data)
            judged = _until(
                lambda: _query(data, "SELECT status FROM runs") == [("interrupted",)],
                GRACE_S + 8,
            )
            if not judged:
                tally.lose(f"step {step_s:+d}: a hung owner was not interrupted in time")
            run.send_signal(signal.SIGCONT)
            return
        if _query(data, "SELECT status FROM runs") != [("running",)]:
            tally.lose(f"step {step_s:+d}: the live run was interrupted")
        gate.touch()
        result = run.wait(WAIT_S)
        if result.hung:
            tally.hang(f"step {step_s:+d}: delegate run never ended")
        elif result.code != 0:
            tally.lose(f"step {step_s:+d}: delegate run exited {result.code}: {result.text:.200}")
    finally:
        _end(run)
        _end(watch)
        tally.add_survivors(survivors(tag), f"step {step_s:+d}")


async def _step_trial_injected(work: Path, tally: Tally, step_s: int) -> None:
    """Without libfaketime: the judge is this process, given the stepped wall clock."""
    from core.orchestrator import AgentOrchestrator

    data, gate = _data_dir(work)
    tag = new_tag()
    run = Cli(["--data-dir", str(data), "run", "--agent", "gated", "explain"], home=work, tag=tag)
    judge = await AgentOrchestrator.open(
        data, clock=lambda: system_clock() + timedelta(seconds=step_s)
    )
    try:
        if not _until(lambda: _query(data, "SELECT status FROM runs") == [("running",)], WAIT_S):
            tally.hang(f"step {step_s:+d}: the run never started: {_told(run)}")
            return
        tally.faults += 1
        for _ in range(5):
            if await judge.interrupt_stale_runs():
                tally.lose(f"step {step_s:+d}: the live run was interrupted")
            await asyncio.sleep(0.5)
        gate.touch()
        result = run.wait(WAIT_S)
        if result.code != 0:
            tally.lose(f"step {step_s:+d}: delegate run exited {result.code}")
    finally:
        await judge.close()
        _end(run)
        tally.add_survivors(survivors(tag), f"step {step_s:+d}")


def step_trials(work: Path, n: int, rng: random.Random) -> Tally:
    tally = Tally("clocks: steps during a run")
    with timed(tally):
        for i in range(n):
            if tally.out_of_time():
                break
            step_s = STEPS_S[i % len(STEPS_S)] if i < len(STEPS_S) else rng.choice(STEPS_S)
            if LIBFAKETIME is not None:
                _step_trial(work / f"step-{i}", tally, step_s, hang=i % 2 == 1)
            else:
                asyncio.run(_step_trial_injected(work / f"step-{i}", tally, step_s))
            tally.trials += 1
            tally.progress()
    if LIBFAKETIME is None:
        tally.note("libfaketime absent: the judge was given the stepped clock in-process")
    return tally


# --- lease hand-overs --------------------------------------------------------


class _Mono:
    """A monotonic clock the trial advances by hand."""

    def __init__(self) -> None:
        self.us = system_mono()

    def __call__(self) -> int:
        return self.us


async def _lease_trial(work: Path, tally: Tally, rng: random.Random) -> None:
    """One hand-over between two supervisors of one host whose wall clocks differ."""
    ttl_s = 10.0
    step_s = rng.choice(STEPS_S) + rng.uniform(-1, 1)
    mono = _Mono()
    store = await Store.open(work / "leases.db")
    try:
        leader = Leadership(store, ttl_s=ttl_s, mono_clock=mono)
        contender = Leadership(
            store,
            ttl_s=ttl_s,
            clock=lambda: system_clock() + timedelta(seconds=step_s),
            mono_clock=mono,
        )
        if not await leader.renew():
            tally.lose("a free lease was not taken")
        tally.faults += 1
        mono.us += int(rng.uniform(0, ttl_s - 0.5) * 1_000_000)
        if await contender.renew():
            tally.lose(f"step {step_s:+.0f}: the lease was taken within its term")
        mono.us += int(ttl_s * 1_000_000)  # the leader died: its term has passed
        if not await contender.renew():
            tally.lose(f"step {step_s:+.0f}: the lease was stranded beyond its term")
    finally:
        await store.close()
        (work / "leases.db").unlink(missing_ok=True)


async def _foreign_lease_trial(work: Path, tally: Tally, rng: random.Random) -> None:
    """A lease of another host whose clock reads ahead or behind: within its term it
    holds; a dead holder's lease ends within its term plus the skew bound."""
    ttl_s = 10.0
    skew_s = rng.choice((-7_200.0, -30.0, 0.0, 20.0, 55.0, 3_600.0, 86_400.0))
    store = await Store.open(work / "leases.db")
    now = to_us(system_clock())
    try:
        ahead_us = now + int(skew_s * 1_000_000)
        other = MonoStamp(1_000, "boot:another-host/")
        assert await store.leases.acquire("supervisor", "far", ahead_us, int(ttl_s * 1e6), other)
        tally.faults += 1
        mine = Clocks().mono_stamp()

        async def takes(after_s: float) -> bool:
            at = now + int(after_s * 1_000_000)
            return await store.leases.acquire("supervisor", "here", at, int(ttl_s * 1e6), mine)

        if skew_s >= 0 and await takes(0.0):
            tally.lose(f"skew {skew_s:+.0f}: a running lease of another host was taken")
        # Bound: its term, plus the skew bound when its clock is not believed, plus its term.
        if not await takes(ttl_s + 60 + ttl_s + 1):
            tally.lose(f"skew {skew_s:+.0f}: the lease of a dead host was stranded")
    finally:
        await store.close()
        (work / "leases.db").unlink(missing_ok=True)


def _handover_trial(work: Path, tally: Tally, lead_step: int, next_step: int) -> None:
    """Real watches: the leader (clock at ``lead_step``) is killed; the next (clock at
    ``next_step``) must not lead while it lives and must lead within the lease's term."""
    data, _gate = _data_dir(work)
    tag = new_tag()
    first_offset, next_offset = work / "first-offset", work / "next-offset"
    first_offset.write_text(f"{lead_step:+d}\n", encoding="ascii")
    next_offset.write_text(f"{next_step:+d}\n", encoding="ascii")
    first = _watch(data, work / "first", tag, first_offset)
    second: Cli | None = None
    try:
        if not _until(lambda: _leads(first), WAIT_S):
            tally.hang(f"{lead_step:+d} -> {next_step:+d}: the first watch never led")
            return
        second = _watch(data, work / "second", tag, next_offset)
        time.sleep(3)
        if _leads(second):
            tally.lose(f"{lead_step:+d} -> {next_step:+d}: two leaders at once")
        _end(first)
        tally.faults += 1
        if not _until(lambda: _leads(second), LEASE_TTL_S + 5):
            tally.lose(f"{lead_step:+d} -> {next_step:+d}: the lease was stranded")
    finally:
        _end(first)
        _end(second)
        tally.add_survivors(survivors(tag), f"hand-over {lead_step:+d} -> {next_step:+d}")


def lease_trials(work: Path, n_injected: int, n_real: int, rng: random.Random) -> Tally:
    tally = Tally("clocks: lease hand-overs")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        for _ in range(n_injected):
            if tally.out_of_time():
                break
            asyncio.run(_lease_trial(work, tally, rng))
            asyncio.run(_foreign_lease_trial(work, tally, rng))
            tally.trials += 2
        pairs = [(7_200, 0), (0, 7_200), (-3_600, 0), (120, -120), (86_400, 40)]
        for i in range(n_real if LIBFAKETIME is not None else 0):
            if tally.out_of_time():
                break
            lead_step, next_step = pairs[i % len(pairs)]
            _handover_trial(work / f"handover-{i}", tally, lead_step, next_step)
            tally.trials += 1
            tally.progress()
    if LIBFAKETIME is None:
        tally.note("libfaketime absent: hand-overs of real watches skipped")
    return tally


# --- runs of another host met by each command ---------------------------------


async def _foreign_run(data: Path, cid: str, beat_s_ago: float) -> str:
    run_id = str(uuid.uuid4())
    now_us = to_us(system_clock())
    store = await Store.open(data / DB_FILENAME)
    try:
        run = NewRun(run_id, "gated", RunKind.FOLLOW_UP, "elsewhere", now_us, owner=ELSEWHERE)
        await store.runs.claim_follow_up(cid, run, None)
    finally:
        await store.close()
    with sqlite3.connect(data / DB_FILENAME) as db:
        db.execute(
            "UPDATE runs SET heartbeat_at = ? WHERE run_id = ?",
            (now_us - int(beat_s_ago * 1_000_000), run_id),
        )
    return run_id


@contextlib.contextmanager
def _beating(data: Path, run_id: str, beat_s: float, *, live: bool) -> Iterator[None]:
    """While the command runs, a live run's other host keeps beating (every 0.5 s, by its
    clock: ``beat_s`` behind ours, ahead if negative); a dead one's stays silent."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(0.5):
            stamp = to_us(system_clock()) - int(beat_s * 1_000_000)
            db = sqlite3.connect(data / DB_FILENAME, timeout=2)
            try:
                with db:
                    db.execute(
                        "UPDATE runs SET heartbeat_at = ? WHERE run_id = ? AND status = 'running'",
                        (stamp, run_id),
                    )
            except sqlite3.OperationalError:  # busy: the next beat
                pass
            finally:
                db.close()

    beater = threading.Thread(target=beat, daemon=True)
    if live:
        beater.start()
    try:
        yield
    finally:
        stop.set()
        if live:
            beater.join()


def _commands(cid: str, run_id: str) -> dict[str, list[str]]:
    return {
        "run --session": ["run", "--session", cid, "again", "--json"],
        "sessions dismiss": ["sessions", "dismiss", cid, "--json"],
        "sessions show": ["sessions", "show", cid, "--json"],
        "sessions list": ["sessions", "list", "--json"],
        "runs list": ["runs", "list", "--json"],
        "runs show": ["runs", "show", run_id, "--json"],
        "runs stop": ["runs", "stop", run_id, "--json"],
        "sessions stop": ["sessions", "stop", cid, "--json"],
        "tool delegate_sessions": [
            "tool",
            "delegate_sessions",
            json.dumps({"operation": "list", "limit": 5}),
        ],
    }


def _foreign_trial(work: Path, tally: Tally, command: str, dead: bool, beat_s: float) -> None:
    data, gate = _data_dir(work)
    gate.touch()
    tag = new_tag()
    d = ["--data-dir", str(data)]
    first = run_cli([*d, "run", "--agent", "gated", "quick"], home=work, tag=tag)
    if first.code != 0:
        tally.lose(f"setup run exited {first.code}: {first.text:.200}")
        return
    [(cid,)] = _query(data, "SELECT conversation_id FROM sessions")
    run_id = asyncio.run(_foreign_run(data, str(cid), beat_s))
    tally.faults += 1
    with _beating(data, run_id, beat_s, live=not dead):
        result = run_cli([*d, *_commands(str(cid), run_id)[command]], home=work, tag=tag)
    what = f"{command} ({'dead' if dead else 'live'} run of another host, beat {beat_s:+.0f} s)"
    [(status,)] = _query(data, "SELECT status FROM runs WHERE run_id = ?", (run_id,))
    if result.hung:
        tally.hang(what)
    elif dead:
        # "runs stop" looks the run up first (which judges it): not_running is the truth.
        if result.code != 0 and not (command == "runs stop" and "not_running" in result.text):
            tally.lose(f"{what}: refused: {result.text:.200}")
        if status != "interrupted":
            tally.lose(f"{what}: the dead run was left {status}")
        if "Traceback" in result.text:
            tally.lose(f"{what}: traceback")
    else:
        if status != "running" and command not in ("runs stop", "sessions stop"):
            tally.lose(f"{what}: a beating run was interrupted ({status})")
        if command == "run --session" and "agent_busy" not in result.text:
            tally.lose(f"{what}: a busy session took a follow-up: {result.text:.200}")
    tally.add_survivors(survivors(tag), what)


def foreign_trials(work: Path, rounds: int, rng: random.Random) -> Tally:
    tally = Tally("clocks: runs of another host met by each command")
    commands = list(_commands("c", "r"))
    with timed(tally):
        for i in range(rounds):
            for command in commands:
                if tally.out_of_time():
                    return tally
                dead = rng.random() < 0.7
                # Dead: silent past the grace, or stamped by a clock far behind. Live:
                # a fresh beat, or one from a clock ahead within the bound.
                beat_s = (
                    rng.choice((GRACE_S + 30, 600.0, 7_200.0))
                    if dead
                    else rng.choice((0.5, 2.0, -20.0))
                )
                _foreign_trial(work / f"foreign-{i}", tally, command, dead, beat_s)
                tally.trials += 1
            tally.progress()
    return tally


def clock_trials(work: Path, scale: float = 1.0, seed: int = 27) -> Tally:
    """Every clocks trial at its full count (times ``scale``)."""
    rng = random.Random(seed)

    def count(n: int) -> int:
        return max(1, round(n * scale))

    tally = Tally("clocks (steps, leases, another host)")
    if clock_id() is None:
        tally.note("no monotonic clock domain here: same-host stamps judged by wall time")
    parts: tuple[Callable[[], Tally], ...] = (
        lambda: step_trials(work / "steps", count(22), rng),
        lambda: lease_trials(work / "leases", count(200), count(5), rng),
        lambda: foreign_trials(work / "foreign", count(3), rng),
    )
    for run in parts:
        part = run()
        print(part.summary(), flush=True)  # each part as it ends
        tally.merge(part)
    return tally
