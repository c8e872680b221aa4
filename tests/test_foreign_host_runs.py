"""A run owned by another host is judged by whoever meets it.

Its pid means nothing here, so only its heartbeat tells: a command that meets
such a run (a follow-up, a dismissal, a listing) interrupts it once its beat is
older than the grace period, as the supervisor would, and then proceeds; a run
that still beats holds its session. A heartbeat stamped by a clock far ahead is
not trusted until that future arrives: it ages from the moment it was seen.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from datetime import timedelta
from pathlib import Path

from gated import gated_data_dir
from support import db_path, json_out, query, run_cli

from core.clock import Clocks, system_clock, to_us
from core.elapsed import SKEW_BOUND_US
from core.models import RunKind
from core.process_identity import ProcessIdentity
from core.store import NewRun, Store

ELSEWHERE = ProcessIdentity(
    host="elsewhere", host_id="boot:0f0f0f0f-other-host/pid:[4026531836]", pid=4242, started=7
)


def a_finished_session(tmp_path: Path) -> tuple[Path, str]:
    data, gate = gated_data_dir(tmp_path)
    gate.touch()
    done = run_cli("--data-dir", str(data), "run", "--agent", "gated", "quick", home=tmp_path)
    assert done.returncode == 0, done.stderr
    [(cid,)] = query(data, "SELECT conversation_id FROM sessions")
    return data, str(cid)


async def foreign_follow_up(data: Path, cid: str, beat_s_ago: float) -> str:
    """A follow-up of ``cid`` in flight, owned by a process of another host that last
    beat ``beat_s_ago`` seconds ago by our clock (negative: its clock is ahead)."""
    run_id = str(uuid.uuid4())
    now_us = to_us(system_clock())
    store = await Store.open(db_path(data))
    try:
        run = NewRun(run_id, "gated", RunKind.FOLLOW_UP, "elsewhere", now_us, owner=ELSEWHERE)
        await store.runs.claim_follow_up(cid, run, None)
    finally:
        await store.close()
    with sqlite3.connect(db_path(data)) as db:
        db.execute(
            "UPDATE runs SET heartbeat_at = ? WHERE run_id = ?",
            (now_us - int(beat_s_ago * 1_000_000), run_id),
        )
    return run_id


def status_of(data: Path, run_id: str) -> tuple[str, str | None]:
    [(status, error)] = query(data, "SELECT status, error FROM runs WHERE run_id = ?", (run_id,))
    return str(status), error


async def test_a_follow_up_interrupts_a_silent_run_of_another_host_and_proceeds(
    tmp_path: Path,
) -> None:
    data, cid = a_finished_session(tmp_path)
    stale = await foreign_follow_up(data, cid, beat_s_ago=600)
    again = run_cli("--data-dir", str(data), "run", "--session", cid, "once more", home=tmp_path)
    assert again.returncode == 0, again.stderr
    status, error = status_of(data, stale)
    assert status == "interrupted"
    assert error is not None
    assert re.search(r"pid 4242 on elsewhere\) stopped answering: no heartbeat for 6\d\ds", error)


async def test_dismiss_interrupts_a_silent_run_of_another_host_and_proceeds(
    tmp_path: Path,
) -> None:
    data, cid = a_finished_session(tmp_path)
    stale = await foreign_follow_up(data, cid, beat_s_ago=600)
    dismissed = run_cli("--data-dir", str(data), "sessions", "dismiss", cid, home=tmp_path)
    assert dismissed.returncode == 0, dismissed.stderr
    assert status_of(data, stale)[0] == "interrupted"


async def test_a_listing_shows_a_silent_run_of_another_host_interrupted(tmp_path: Path) -> None:
    data, cid = a_finished_session(tmp_path)
    stale = await foreign_follow_up(data, cid, beat_s_ago=600)
    shown = run_cli("--data-dir", str(data), "runs", "show", stale, "--json", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json_out(shown)["run"]["status"] == "interrupted"


async def test_a_run_of_another_host_that_beats_holds_its_session(tmp_path: Path) -> None:
    data, cid = a_finished_session(tmp_path)
    live = await foreign_follow_up(data, cid, beat_s_ago=2)
    busy = run_cli(
        "--data-dir", str(data), "run", "--session", cid, "once more", "--json", home=tmp_path
    )
    assert busy.returncode == 1
    assert json_out(busy)["error"]["code"] == "agent_busy"
    refused = run_cli("--data-dir", str(data), "sessions", "dismiss", cid, home=tmp_path)
    assert refused.returncode == 1
    assert status_of(data, live) == ("running", None)


async def test_a_heartbeat_from_a_clock_far_ahead_ages_from_when_it_was_seen(
    tmp_path: Path,
) -> None:
    data, cid = a_finished_session(tmp_path)
    ahead = await foreign_follow_up(data, cid, beat_s_ago=-7_200)  # its clock: 2 h ahead
    store = await Store.open(db_path(data))
    try:
        # First seen now: not trusted, restamped with our time; the run still holds.
        assert await store.runs.interrupt_dead_runs() == 0
        [(beat,)] = query(data, "SELECT heartbeat_at FROM runs WHERE run_id = ?", (ahead,))
        assert abs(beat - to_us(system_clock())) < SKEW_BOUND_US
        # Within the grace: still running. Past it (the owner never beat again): interrupted.
        store.runs.clocks = Clocks(lambda: system_clock() + timedelta(seconds=20))
        assert await store.runs.interrupt_dead_runs() == 0
        store.runs.clocks = Clocks(lambda: system_clock() + timedelta(seconds=40))
        assert await store.runs.interrupt_dead_runs() == 1
    finally:
        await store.close()
    assert status_of(data, ahead)[0] == "interrupted"


async def test_a_heartbeat_ahead_within_the_skew_bound_is_trusted(tmp_path: Path) -> None:
    data, cid = a_finished_session(tmp_path)
    ahead = await foreign_follow_up(data, cid, beat_s_ago=-20)  # its clock: 20 s ahead
    store = await Store.open(db_path(data))
    try:
        assert await store.runs.interrupt_dead_runs() == 0
        [(beat,)] = query(data, "SELECT heartbeat_at FROM runs WHERE run_id = ?", (ahead,))
        assert beat > to_us(system_clock())  # left as its owner wrote it
        store.runs.clocks = Clocks(lambda: system_clock() + timedelta(seconds=60))
        assert await store.runs.interrupt_dead_runs() == 1  # 40 s silent by our clock
    finally:
        await store.close()


async def test_sessions_stop_interrupts_a_silent_run_of_another_host(tmp_path: Path) -> None:
    data, cid = a_finished_session(tmp_path)
    stale = await foreign_follow_up(data, cid, beat_s_ago=600)
    stopped = run_cli("--data-dir", str(data), "sessions", "stop", cid, "--json", home=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert status_of(data, stale)[0] == "interrupted"
    assert query(data, "SELECT state FROM sessions") == [("idle",)]
