"""Runs: launching a session, claiming one for a follow-up, finishing a run.

A follow-up claims its session with one conditional UPDATE inside ``BEGIN
IMMEDIATE``, together with the run row and the prompt message. Zero rows
changed means ``agent_busy`` (or ``session_not_ready``, or
``unknown_conversation``). Because SQLite serialises writers, this holds across
processes sharing the file. Who owns a run in flight, heartbeats and interrupting
runs whose owner is gone belong to :class:`~core.store.run_owners.RunOwners`, the
part of this repository it builds on.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import aiosqlite

from core import process_identity
from core.errors import AgentBusy, SessionNotReady, UnknownConversation, UnknownRun
from core.models import Run, RunStatus, Session, SessionMode, SessionState, Usage
from core.store.database import Database, first_row
from core.store.history import HistoryRepository
from core.store.messages import MessagesRepository
from core.store.rows import (
    RUN_COLUMNS,
    SESSION_COLUMNS,
    NewMessage,
    NewRun,
    NewSession,
    clamp_int,
    ready_state,
    run_from_row,
    session_from_row,
)
from core.store.run_owners import DEFAULT_GRACE_US, AgentProcess, RunInFlight, RunOwners

__all__ = ["DEFAULT_GRACE_US", "AgentProcess", "RunInFlight", "RunsRepository"]

# States from which a follow-up may start (detached sessions only once Ready).
_RESUMABLE = (SessionState.IDLE.value, SessionState.READY.value)


class RunsRepository(RunOwners):
    """The ``runs`` table and the session state changes a run makes (its owner's side:
    :class:`~core.store.run_owners.RunOwners`).
    """

    def __init__(
        self, db: Database, messages: MessagesRepository, history: HistoryRepository
    ) -> None:
        super().__init__(db, history)
        self._messages = messages

    async def start_launch(
        self,
        session: NewSession,
        run: NewRun,
        prompt: NewMessage | None,
        shared: Sequence[NewMessage] = (),
        carried: Sequence[NewMessage] = (),
    ) -> None:
        """Create a session already running its first run, with the prompt stored.

        ``prompt`` is None when the agent keeps its own transcript (a real CLI):
        the turn is still counted. ``shared``: messages a sub-agent starts with
        (its parent's system and context), stored before the prompt, once.
        ``carried``: what the prompt carries as context (a capsule, a hand-off),
        stored after it.
        """
        state = (
            SessionState.PENDING if session.mode is SessionMode.DETACHED else SessionState.RUNNING
        )
        async with self._db.transaction() as db:
            await db.execute(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch,"
                " title, parent_id, source, created_at, last_interacted_at, context_limit,"
                " active_run_id, model, window_source, clamped_from, forked_from, capsule_id,"
                " capsule_digest)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    session.model,
                    session.window_source.value,
                    session.clamped_from,
                    session.forked_from,
                    session.capsule_id,
                    session.capsule_digest,
                ),
            )
            await self._insert(db, session.conversation_id, run)
            await self._messages.append_in(db, session.conversation_id, shared)
            await self._append_prompt(db, session.conversation_id, prompt)
            await self._messages.append_in(db, session.conversation_id, carried)

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
        # The first beat: a run is fresh when it starts (by this host's clock, if it is its).
        mono = self.clocks.mono_stamp() if me.host_id == process_identity.host_id() else None
        await db.execute(
            "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status, started_at,"
            " owner_pid, owner_host, owner_host_id, owner_started, owner_kind, heartbeat_at,"
            " capsule_id, capsule_digest, heartbeat_mono, heartbeat_clock)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                run.owner_kind,
                run.started_us,
                run.capsule_id,
                run.capsule_digest,
                None if mono is None else mono.mono_us,
                None if mono is None else mono.clock,
            ),
        )

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
        token_corrections: Sequence[tuple[int, int]] = (),
    ) -> Run:
        """Close a run, append its reply, and make the session resumable again.

        ``context_tokens`` / ``context_limit``: what the agent itself reported
        its context holds and can hold; they replace our running count.
        ``stderr``: the tail of an agent CLI's standard error, kept on the run.
        ``token_corrections``: exact counts of the run's messages stored with an
        estimate, ``(seq, exact - estimate)`` (core.context.counting).
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
            await self._messages.correct_counts_in(db, conversation_id, token_corrections)
            if context_tokens is not None or context_limit is not None:
                # A window the agent reports is recorded; a clamp still holds.
                await db.execute(
                    "UPDATE sessions SET context_tokens = coalesce(?1, context_tokens),"
                    " context_limit = CASE WHEN ?2 IS NULL OR window_source = 'clamp'"
                    " THEN context_limit ELSE ?2 END,"
                    " window_source = CASE WHEN ?2 IS NULL OR window_source = 'clamp'"
                    " THEN window_source ELSE 'recorded' END"
                    " WHERE conversation_id = ?3",
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
        run still holds it. The first close wins; the live output is dropped (the
        output holds the reply now), the stderr tail stays for whoever looks.
        """
        await db.execute(
            "UPDATE runs SET status = ?, finished_at = coalesce(?, started_at), input_tokens = ?,"
            " output_tokens = ?, output = ?, error = ?, live_output = NULL"
            " WHERE run_id = ? AND status = ?",
            (
                status.value,
                finished_us,
                usage.input_tokens,
                usage.output_tokens,
                output,
                error,
                run_id,
                RunStatus.RUNNING.value,  # the first close wins (an interrupt, say)
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

    async def last_started_us(self, conversation_id: str) -> int:
        """When the session's newest run started (µs), 0 before its first."""
        row = await self._db.fetch_one(
            "SELECT max(started_at) AS last FROM runs WHERE conversation_id = ?",
            (conversation_id,),
        )
        return clamp_int(row["last"]) if row is not None and row["last"] is not None else 0

    async def for_session(self, conversation_id: str) -> list[Run]:
        """Every run of a session, oldest first."""
        rows = await self._db.fetch_all(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE conversation_id = ? ORDER BY started_at",
            (conversation_id,),
        )
        return [run_from_row(r) for r in rows]

    async def run_ids_with_prefix(self, prefix: str, limit: int) -> builtins.list[str]:
        """Run ids starting with ``prefix`` (a range on the primary key), at most ``limit``."""
        rows = await self._db.fetch_all(
            "SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [str(r["run_id"]) for r in rows]

    async def list(self, status: RunStatus | None = None, limit: int = 50) -> builtins.list[Run]:
        """The latest runs, newest first; only those with ``status`` when given."""
        where, params = "", tuple[object, ...]()
        if status is not None:
            where, params = " WHERE status = ?", (status.value,)
        rows = await self._db.fetch_all(
            f"SELECT {RUN_COLUMNS} FROM runs{where} ORDER BY started_at DESC, run_id DESC LIMIT ?",
            (*params, limit),
        )
        return [run_from_row(r) for r in rows]
