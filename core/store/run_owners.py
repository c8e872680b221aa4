"""Who owns a run in flight, and whether it is still alive: heartbeats, the cancel flag,
live activity, the agent CLIs a run started, and interrupting runs whose owner is gone
or silent (its session freed, a history cell written).

:class:`RunOwners` is the part of :class:`~core.store.runs.RunsRepository` that judges
and serves a run's owner; the run rows themselves (launch, claim, finish) are kept by
:mod:`core.store.runs`.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import aiosqlite

from core import process_identity
from core.clock import Clocks, MonoStamp, from_us
from core.elapsed import Age, Stamp, age
from core.events import RunInterrupted
from core.models import RunStatus, SessionMode
from core.store.database import Database
from core.store.history import HistoryRepository
from core.store.rows import ready_state

# Sessions with a run in flight, and who owns that run (index sessions_in_flight).
_IN_FLIGHT = (
    "SELECT s.conversation_id, s.mode, r.run_id, r.agent_id, r.owner_pid, r.owner_host,"
    " r.owner_host_id, r.owner_started, r.owner_kind, r.heartbeat_at, r.heartbeat_mono,"
    " r.heartbeat_clock"
    " FROM sessions s JOIN runs r ON r.run_id = s.active_run_id"
    " WHERE s.active_run_id IS NOT NULL"
)
# SQLite's default limit on bound parameters is far above this; one process
# never drives more runs than this at once, and larger sets are chunked.
_IDS_PER_QUERY = 500
DEFAULT_GRACE_US = 30_000_000
"""How long another host's run may be silent before any reader interrupts it (the
``run_grace_seconds`` setting's default; the orchestrator sets its own)."""


@dataclass(frozen=True, slots=True)
class RunInFlight:
    """A run in flight and who owns it (see :meth:`RunOwners.in_flight`)."""

    run_id: str
    conversation_id: str
    owner_host: str | None
    owner_host_id: str | None
    owner_pid: int | None
    owner_started: int | None
    owner_kind: str = "other"


@dataclass(frozen=True, slots=True)
class _Stale:
    """A run in flight to interrupt, and why.

    ``silent``: judged by its heartbeat, so it is interrupted only if it has
    still not beaten (its stamps unchanged) when the transaction runs.
    """

    row: aiosqlite.Row
    reason: str
    silent: bool = False


@dataclass(frozen=True, slots=True)
class AgentProcess:
    """An agent CLI a run started, still alive on this host (see :meth:`orphaned_agents`)."""

    run_id: str
    pid: int
    started: int | None


class RunOwners:
    """Runs in flight and their owners, over the ``runs`` table.

    ``clocks``: the wall and monotonic clocks heartbeats are stamped and judged
    by; ``grace_us``: how long a run of another host may be silent before a
    reader interrupts it. The orchestrator sets both from its own.
    """

    def __init__(self, db: Database, history: HistoryRepository) -> None:
        self._db = db
        self._history = history
        self.clocks = Clocks()
        self.grace_us = DEFAULT_GRACE_US

    async def interrupt_dead_runs(self, conversation_id: str | None = None) -> int:
        """Mark ``interrupted`` every run in flight whose owner is known to be gone.

        Gone: on this host, its pid no longer exists, or exists with another start
        time (reused), or this host has rebooted since; on another host (whose
        pids mean nothing here), its heartbeat is older than :attr:`grace_us`, as
        the supervisor judges it. Its session is freed and a history cell says
        so. Every reader calls this first (lists, lookups, counts, the claim,
        dismiss), so neither a killed ``delegate run`` nor a host that went away
        leaves a session ``running``. A hung owner of this host is judged by the
        supervisor (:meth:`interrupt_stale_events`). Returns how many were interrupted;
        a read-only store only reads.
        """
        sql, params = _IN_FLIGHT, tuple[str, ...]()
        if conversation_id is not None:
            sql, params = f"{_IN_FLIGHT} AND s.conversation_id = ?", (conversation_id,)
        rows = await self._db.fetch_all(sql, params)
        now_us, mono = self.clocks.wall_us(), self.clocks.mono_stamp()
        dead: list[_Stale] = []
        for r in rows:
            alive = _owner_liveness(r)
            if alive == "gone":
                dead.append(_Stale(r, _gone_reason(r)))
            elif alive == "unknown":
                dead.extend(await self._judge_silence(r, now_us, mono, self.grace_us))
        return len(await self._interrupt(dead, now_us))

    async def _judge_silence(
        self, r: aiosqlite.Row, now_us: int, mono: MonoStamp | None, grace_us: int
    ) -> list[_Stale]:
        """The run, if its owner has not beaten for longer than ``grace_us``.

        A beat stamped by a wall clock beyond the skew bound ahead is restamped
        with ``now_us``, the moment it was seen: it ages from there.
        """
        beat = r["heartbeat_at"]
        if not isinstance(beat, int):
            return []  # an owner that never beat (an older delegate): liveness alone
        silence = age(Stamp(beat, r["heartbeat_mono"], r["heartbeat_clock"]), now_us, mono)
        if silence.untrusted:
            await self._restamp(r, now_us)
            return []
        if silence.us <= grace_us:
            return []
        return [_Stale(r, _silent_reason(r, silence), silent=True)]

    async def _restamp(self, r: aiosqlite.Row, now_us: int) -> None:
        """Replace a heartbeat from the future (a clock beyond the skew bound) with ``now_us``."""
        if self._db.read_only:
            return
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE runs SET heartbeat_at = ? WHERE run_id = ? AND status = ?"
                " AND heartbeat_at = ?",
                (now_us, r["run_id"], RunStatus.RUNNING.value, r["heartbeat_at"]),
            )

    async def interrupt_stale_events(self, now_us: int, grace_us: int) -> list[RunInterrupted]:
        """Interrupt every run in flight whose owner is gone or silent; the history
        events stored (to publish).

        Gone: as in :meth:`interrupt_dead_runs` (this host only). Silent: its
        owner's last heartbeat is older than ``grace_us`` — an owner on another
        host, or one that hangs (stopped, swapped out, deadlocked). ``now_us`` is
        wall time; a heartbeat of this host is judged by the monotonic clock of
        :attr:`clocks` instead (see core.elapsed), so a stepped wall clock never
        decides. This process never judges its own runs silent. A run whose owner
        never beat (an older delegate) is judged by liveness alone. Each is stored ``interrupted``
        (its live reply tail kept as its output), its session freed, its cancel
        flag set (an owner that wakes up stops it), and a ``run_interrupted``
        history cell written, all in one transaction.
        """
        me = process_identity.current()
        mono = self.clocks.mono_stamp()
        found: list[_Stale] = []
        for r in await self._db.fetch_all(_IN_FLIGHT):
            if _owner_liveness(r) == "gone":
                found.append(_Stale(r, _gone_reason(r)))
                continue
            if r["owner_host_id"] == me.host_id and r["owner_pid"] == me.pid:
                continue  # our own runs are alive: we are running this very code
            found.extend(await self._judge_silence(r, now_us, mono, grace_us))
        return await self._interrupt(found, now_us)

    async def _interrupt(self, runs: Sequence[_Stale], now_us: int) -> list[RunInterrupted]:
        """Close each run ``interrupted`` with its reason, free its session, write its cell.

        Each run is re-checked inside the transaction: one its owner closed
        meanwhile, or (judged by its heartbeat) that beat again meanwhile, is
        left alone.
        """
        if not runs or self._db.read_only:
            return []
        events = []
        async with self._db.transaction() as db:
            for stale in runs:
                r = stale.row
                still_silent, params = (
                    "",
                    [
                        RunStatus.INTERRUPTED.value,
                        stale.reason,
                        now_us,
                        r["run_id"],
                        RunStatus.RUNNING.value,
                    ],
                )
                if stale.silent:
                    still_silent = " AND heartbeat_at IS ? AND heartbeat_mono IS ?"
                    params += [r["heartbeat_at"], r["heartbeat_mono"]]
                cur = await db.execute(
                    "UPDATE runs SET status = ?, error = ?,"
                    " finished_at = coalesce(heartbeat_at, started_at),"
                    " output = coalesce(live_output, output), live_output = NULL,"
                    " cancel_requested_at = coalesce(cancel_requested_at, ?)"
                    f" WHERE run_id = ? AND status = ?{still_silent}",
                    params,
                )
                if cur.rowcount != 1:
                    continue
                await db.execute(
                    "UPDATE sessions SET state = ?, active_run_id = NULL, last_run_status = ?"
                    " WHERE conversation_id = ? AND active_run_id = ?",
                    (
                        ready_state(SessionMode(r["mode"]), RunStatus.INTERRUPTED).value,
                        RunStatus.INTERRUPTED.value,
                        r["conversation_id"],
                        r["run_id"],
                    ),
                )
                event = RunInterrupted(
                    at=from_us(now_us),
                    conversation_id=str(r["conversation_id"]),
                    run_id=str(r["run_id"]),
                    agent_id=str(r["agent_id"]),
                    reason=stale.reason,
                )
                await self._history.add_in(
                    db,
                    now_us,
                    event.kind,
                    event.conversation_id,
                    event.run_id,
                    event.model_dump(mode="json"),
                )
                events.append(event)
        return events

    # --- the owner's side: heartbeats, the cancel flag, live activity ------

    async def heartbeat(self, run_ids: Collection[str], now_us: int) -> None:
        """The owner is alive: one write stamps every run it drives (wall time ``now_us``
        and the monotonic reading of :attr:`clocks`)."""
        ids = builtins.list(run_ids)
        if not ids or self._db.read_only:
            return
        mono = self.clocks.mono_stamp()
        async with self._db.transaction() as db:
            for chunk in _chunks(ids):
                await db.execute(
                    "UPDATE runs SET heartbeat_at = ?, heartbeat_mono = ?, heartbeat_clock = ?"
                    f" WHERE status = ? AND run_id IN {_marks(chunk)}",
                    (
                        now_us,
                        None if mono is None else mono.mono_us,
                        None if mono is None else mono.clock,
                        RunStatus.RUNNING.value,
                        *chunk,
                    ),
                )

    async def request_cancel(self, run_id: str, now_us: int) -> bool:
        """Ask a run's owner, wherever it is, to stop it (read on its next beat).

        False when the run is not running (already closed, or unknown).
        """
        async with self._db.transaction() as db:
            cur = await db.execute(
                "UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, ?)"
                " WHERE run_id = ? AND status = ?",
                (now_us, run_id, RunStatus.RUNNING.value),
            )
            return cur.rowcount == 1

    async def cancel_requested(self, run_ids: Collection[str]) -> set[str]:
        """Which of these runs someone asked to stop (one cheap query per beat)."""
        found: set[str] = set()
        for chunk in _chunks(builtins.list(run_ids)):
            rows = await self._db.fetch_all(
                "SELECT run_id FROM runs WHERE cancel_requested_at IS NOT NULL"
                f" AND run_id IN {_marks(chunk)}",
                chunk,
            )
            found.update(str(r["run_id"]) for r in rows)
        return found

    async def record_activity(
        self, run_id: str, live_output: str, stderr_tail: str, output_at_us: int | None
    ) -> None:
        """Store what a running run shows now: its reply so far, its stderr's last lines.

        ``output_at_us``: when the reply last grew (None keeps the time stored). The caller
        caps and redacts both texts; a closed run is left as it was.
        """
        if self._db.read_only:
            return
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE runs SET live_output = ?, stderr_tail = ?,"
                " last_output_at = COALESCE(?, last_output_at)"
                " WHERE run_id = ? AND status = ?",
                (live_output, stderr_tail, output_at_us, run_id, RunStatus.RUNNING.value),
            )

    async def in_flight(self, run_or_conversation_id: str) -> RunInFlight | None:
        """The run in flight named by its run id or its session's id, with its owner."""
        row = await self._db.fetch_one(
            f"{_IN_FLIGHT} AND (s.conversation_id = ? OR r.run_id = ?)",
            (run_or_conversation_id, run_or_conversation_id),
        )
        if row is None:
            return None
        return RunInFlight(
            str(row["run_id"]),
            str(row["conversation_id"]),
            row["owner_host"],
            row["owner_host_id"],
            row["owner_pid"],
            row["owner_started"],
            str(row["owner_kind"] or "other"),
        )

    async def record_agent_process(self, run_id: str, pid: int, started: int | None) -> None:
        """Remember the agent CLI process a run started (``started``: its start time,
        from :func:`core.process_identity.start_time`), so a later process can find
        it if this one dies."""
        async with self._db.transaction() as db:
            await db.execute(
                "UPDATE runs SET agent_pid = ?, agent_started = ? WHERE run_id = ?",
                (pid, started, run_id),
            )

    async def orphaned_agents(self, conversation_id: str) -> list[AgentProcess]:
        """Agent CLIs of a session's finished runs that still run on this host.

        A run's owner died (its run is ``interrupted``) but the CLI it started
        lives on: stop these before starting another CLI on the conversation.
        """
        rows = await self._db.fetch_all(
            "SELECT run_id, owner_host, owner_host_id, agent_pid, agent_started FROM runs"
            " WHERE conversation_id = ? AND agent_pid IS NOT NULL AND status != ?",
            (conversation_id, RunStatus.RUNNING.value),
        )
        return [
            AgentProcess(str(r["run_id"]), int(r["agent_pid"]), r["agent_started"])
            for r in rows
            if process_identity.liveness(
                r["owner_host"], r["owner_host_id"], r["agent_pid"], r["agent_started"]
            )
            == "alive"
        ]


def _owner_liveness(row: aiosqlite.Row) -> process_identity.Liveness:
    return process_identity.liveness(
        row["owner_host"], row["owner_host_id"], row["owner_pid"], row["owner_started"]
    )


def _gone_reason(row: aiosqlite.Row) -> str:
    return f"the process running it (pid {row['owner_pid']}) ended before it finished"


def _silent_reason(row: aiosqlite.Row, silence: Age) -> str:
    return (
        f"its owner (pid {row['owner_pid']} on {row['owner_host']}) stopped answering:"
        f" no heartbeat for {silence.us / 1_000_000:.0f}s"
    )


def _chunks(ids: Sequence[str]) -> builtins.list[Sequence[str]]:
    return [ids[i : i + _IDS_PER_QUERY] for i in range(0, len(ids), _IDS_PER_QUERY)]


def _marks(ids: Sequence[str]) -> str:
    return "(" + ", ".join("?" * len(ids)) + ")"
