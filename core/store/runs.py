"""Runs: launching a session, claiming one for a follow-up, finishing a run.

A follow-up claims its session with one conditional UPDATE inside ``BEGIN
IMMEDIATE``, together with the run row and the prompt message. Zero rows
changed means ``agent_busy`` (or ``session_not_ready``, or
``unknown_conversation``). Because SQLite serialises writers, this holds across
processes sharing the file.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from core import process_identity
from core.errors import AgentBusy, SessionNotReady, UnknownConversation, UnknownRun
from core.models import Run, RunStatus, Session, SessionMode, SessionState, Usage
from core.store.database import Database, first_row
from core.store.messages import MessagesRepository
from core.store.rows import (
    RUN_COLUMNS,
    SESSION_COLUMNS,
    NewMessage,
    NewRun,
    NewSession,
    ready_state,
    run_from_row,
    session_from_row,
)

# States from which a follow-up may start (detached sessions only once Ready).
_RESUMABLE = (SessionState.IDLE.value, SessionState.READY.value)
# Sessions with a run in flight, and who owns that run (index sessions_in_flight).
_IN_FLIGHT = (
    "SELECT s.conversation_id, s.mode, r.run_id, r.owner_pid, r.owner_host, r.owner_host_id,"
    " r.owner_started FROM sessions s JOIN runs r ON r.run_id = s.active_run_id"
    " WHERE s.active_run_id IS NOT NULL"
)


@dataclass(frozen=True, slots=True)
class RunInFlight:
    """A run in flight and who owns it (see :meth:`RunsRepository.in_flight`)."""

    run_id: str
    conversation_id: str
    owner_host: str | None
    owner_host_id: str | None
    owner_pid: int | None
    owner_started: int | None


@dataclass(frozen=True, slots=True)
class AgentProcess:
    """An agent CLI a run started, still alive on this host (see :meth:`orphaned_agents`)."""

    run_id: str
    pid: int
    started: int | None


class RunsRepository:
    """The ``runs`` table and the session state changes a run makes."""

    def __init__(self, db: Database, messages: MessagesRepository) -> None:
        self._db = db
        self._messages = messages

    async def start_launch(
        self, session: NewSession, run: NewRun, prompt: NewMessage | None
    ) -> None:
        """Create a session already running its first run, with the prompt stored.

        ``prompt`` is None when the agent keeps its own transcript (a real CLI):
        the turn is still counted.
        """
        state = (
            SessionState.PENDING if session.mode is SessionMode.DETACHED else SessionState.RUNNING
        )
        async with self._db.transaction() as db:
            await db.execute(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch,"
                " title, parent_id, source, created_at, last_interacted_at, context_limit,"
                " active_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.conversation_id,
                    session.agent_id,
                    session.mode.value,
                    state.value,
                    session.cwd,
                    session.git_branch,
                    session.title,
                    session.parent_id,
                    session.source,
                    session.created_us,
                    session.created_us,
                    session.context_limit,
                    run.run_id,
                ),
            )
            await self._insert(db, session.conversation_id, run)
            await self._append_prompt(db, session.conversation_id, prompt)

    async def claim_follow_up(
        self, conversation_id: str, run: NewRun, prompt: NewMessage | None
    ) -> Session:
        """Atomically move a resumable session to ``running`` and record the run.

        Zero rows changed by the conditional UPDATE means another run holds the
        session (``agent_busy``), a detached launch is not Ready yet, or the id is
        unknown. A run left ``running`` by a process that died is recovered first.
        """
        for _attempt in range(2):
            async with self._db.transaction() as db:
                cur = await db.execute(
                    "UPDATE sessions SET state = ?, active_run_id = ?, last_interacted_at = ?"
                    f" WHERE conversation_id = ? AND state IN {_RESUMABLE}",
                    (SessionState.RUNNING.value, run.run_id, run.started_us, conversation_id),
                )
                if cur.rowcount == 1:
                    await self._insert(db, conversation_id, run)
                    await self._append_prompt(db, conversation_id, prompt)
                    row = first_row(
                        await db.execute_fetchall(
                            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE conversation_id = ?",
                            (conversation_id,),
                        )
                    )
                    assert row is not None
                    return session_from_row(row)
            if not await self.interrupt_dead_runs(conversation_id):
                break
        row = await self._db.fetch_one(
            "SELECT state FROM sessions WHERE conversation_id = ?", (conversation_id,)
        )
        if row is None:
            raise UnknownConversation(conversation_id)
        if row["state"] == SessionState.PENDING.value:
            raise SessionNotReady(conversation_id)
        raise AgentBusy(conversation_id)

    async def _append_prompt(
        self, db: aiosqlite.Connection, conversation_id: str, prompt: NewMessage | None
    ) -> None:
        """Store the prompt, or only count the turn when the agent keeps the transcript."""
        if prompt is not None:
            await self._messages.append_in(db, conversation_id, [prompt])
        else:
            await self._messages.count_turn_in(db, conversation_id)

    async def _insert(self, db: aiosqlite.Connection, conversation_id: str, run: NewRun) -> None:
        """The run row, owned by this process or ``run.owner`` (host identity, pid, start time)."""
        me = run.owner or process_identity.current()
        await db.execute(
            "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status, started_at,"
            " owner_pid, owner_host, owner_host_id, owner_started)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                conversation_id,
                run.agent_id,
                run.kind.value,
                run.prompt,
                RunStatus.RUNNING.value,
                run.started_us,
                me.pid,
                me.host,
                me.host_id,
                me.started,
            ),
        )

    async def interrupt_dead_runs(self, conversation_id: str | None = None) -> int:
        """Mark ``interrupted`` every run in flight whose owner on this host is gone.

        Gone: its pid no longer exists, or exists with another start time (reused),
        or this host has rebooted since. Its session is freed. Every reader calls
        this first (lists, lookups, counts, the claim, dismiss), so a killed
        ``delegate run`` never leaves a session ``running``. Runs of another host
        are left alone: a heartbeat (a later issue) will judge them here, in
        :func:`core.process_identity.liveness`. Returns how many were interrupted;
        a read-only store only reads.
        """
        sql, params = _IN_FLIGHT, tuple[str, ...]()
        if conversation_id is not None:
            sql, params = f"{_IN_FLIGHT} AND s.conversation_id = ?", (conversation_id,)
        rows = await self._db.fetch_all(sql, params)
        dead = [
            r
            for r in rows
            if process_identity.liveness(
                r["owner_host"], r["owner_host_id"], r["owner_pid"], r["owner_started"]
            )
            == "gone"
        ]
        if not dead or self._db.read_only:
            return 0
        async with self._db.transaction() as db:
            for r in dead:
                await self._close(
                    db,
                    str(r["run_id"]),
                    str(r["conversation_id"]),
                    RunStatus.INTERRUPTED,
                    Usage(),
                    "",
                    f"the process running it (pid {r['owner_pid']}) ended before it finished",
                    None,
                    ready_state(SessionMode(r["mode"]), RunStatus.INTERRUPTED),
                )
        return len(dead)

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

    async def finish(
        self,
        run_id: str,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        finished_us: int,
        reply: NewMessage | None,
        *,
        context_tokens: int | None = None,
        context_limit: int | None = None,
        stderr: str | None = None,
    ) -> Run:
        """Close a run, append its reply, and make the session resumable again.

        ``context_tokens`` / ``context_limit``: what the agent itself reported
        its context holds and can hold; they replace our running count.
        ``stderr``: the tail of an agent CLI's standard error, kept on the run.
        """
        async with self._db.transaction() as db:
            row = first_row(
                await db.execute_fetchall(
                    "SELECT s.mode, r.conversation_id FROM runs r"
                    " JOIN sessions s ON s.conversation_id = r.conversation_id WHERE r.run_id = ?",
                    (run_id,),
                )
            )
            if row is None:
                raise UnknownRun(run_id)
            mode, conversation_id = SessionMode(row["mode"]), str(row["conversation_id"])
            if reply is not None:
                await self._messages.append_in(db, conversation_id, [reply])
            if context_tokens is not None or context_limit is not None:
                await db.execute(
                    "UPDATE sessions SET context_tokens = coalesce(?, context_tokens),"
                    " context_limit = coalesce(?, context_limit) WHERE conversation_id = ?",
                    (context_tokens, context_limit, conversation_id),
                )
            if stderr:
                await db.execute("UPDATE runs SET stderr = ? WHERE run_id = ?", (stderr, run_id))
            await self._close(
                db,
                run_id,
                conversation_id,
                status,
                usage,
                output,
                error,
                finished_us,
                ready_state(mode, status),
            )
            closed = first_row(
                await db.execute_fetchall(
                    f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
                )
            )
        assert closed is not None
        return run_from_row(closed)

    async def _close(
        self,
        db: aiosqlite.Connection,
        run_id: str,
        conversation_id: str,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        finished_us: int | None,
        next_state: SessionState,
    ) -> None:
        """Store the run's outcome and free its session (``finished_us`` None: no touch).

        Both statements find their row by primary key; the session only if this
        run still holds it.
        """
        await db.execute(
            "UPDATE runs SET status = ?, finished_at = coalesce(?, started_at), input_tokens = ?,"
            " output_tokens = ?, output = ?, error = ? WHERE run_id = ?",
            (
                status.value,
                finished_us,
                usage.input_tokens,
                usage.output_tokens,
                output,
                error,
                run_id,
            ),
        )
        touch = ", last_interacted_at = ?" if finished_us is not None else ""
        params: list[object] = [next_state.value, status.value]
        if finished_us is not None:
            params.append(finished_us)
        params += [conversation_id, run_id]
        await db.execute(
            "UPDATE sessions SET state = ?, active_run_id = NULL, last_run_status = ?"
            f"{touch} WHERE conversation_id = ? AND active_run_id = ?",
            params,
        )

    async def get(self, run_id: str) -> Run:
        row = await self._db.fetch_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
        )
        if row is None:
            raise UnknownRun(run_id)
        return run_from_row(row)

    async def for_session(self, conversation_id: str) -> list[Run]:
        """Every run of a session, oldest first."""
        rows = await self._db.fetch_all(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE conversation_id = ? ORDER BY started_at",
            (conversation_id,),
        )
        return [run_from_row(r) for r in rows]
