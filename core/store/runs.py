"""Runs: launching a session, claiming one for a follow-up, finishing a run.

A follow-up claims its session with one conditional UPDATE inside ``BEGIN
IMMEDIATE``, together with the run row and the prompt message. Zero rows
changed means ``agent_busy`` (or ``session_not_ready``, or
``unknown_conversation``). Because SQLite serialises writers, this holds across
processes sharing the file.
"""

from __future__ import annotations

import os
import socket

import aiosqlite

from core.errors import AgentBusy, SessionNotReady, UnknownConversation
from core.models import Run, RunStatus, Session, SessionMode, SessionState, Usage
from core.store.database import Database
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


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
                    async with db.execute(
                        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE conversation_id = ?",
                        (conversation_id,),
                    ) as found:
                        row = await found.fetchone()
                    assert row is not None
                    return session_from_row(row)
            if not await self._recover_if_orphaned(conversation_id):
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
        await db.execute(
            "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status, started_at,"
            " owner_pid, owner_host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                conversation_id,
                run.agent_id,
                run.kind.value,
                run.prompt,
                RunStatus.RUNNING.value,
                run.started_us,
                os.getpid(),
                socket.gethostname(),
            ),
        )

    async def _recover_if_orphaned(self, conversation_id: str) -> bool:
        """Fail a run whose owning process on this host is gone; True if one was."""
        row = await self._db.fetch_one(
            "SELECT r.run_id, r.owner_pid, r.owner_host, s.mode FROM sessions s"
            " JOIN runs r ON r.run_id = s.active_run_id WHERE s.conversation_id = ?",
            (conversation_id,),
        )
        if row is None:
            return False
        pid = row["owner_pid"]
        if row["owner_host"] != socket.gethostname() or pid is None or _pid_alive(int(pid)):
            return False
        async with self._db.transaction() as db:
            await self._close(
                db,
                row["run_id"],
                RunStatus.FAILED,
                Usage(),
                "",
                f"the process running it (pid {pid}) exited before it finished",
                None,
                ready_state(SessionMode(row["mode"])),
            )
        return True

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
            async with db.execute(
                "SELECT s.mode, r.conversation_id FROM runs r"
                " JOIN sessions s ON s.conversation_id = r.conversation_id WHERE r.run_id = ?",
                (run_id,),
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownConversation(f"run {run_id}")
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
                db, run_id, status, usage, output, error, finished_us, ready_state(mode)
            )
            async with db.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
            ) as cur:
                closed = await cur.fetchone()
        assert closed is not None
        return run_from_row(closed)

    async def _close(
        self,
        db: aiosqlite.Connection,
        run_id: str,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        finished_us: int | None,
        next_state: SessionState,
    ) -> None:
        """Store the run's outcome and free its session (``finished_us`` None: no touch)."""
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
        params.append(run_id)
        await db.execute(
            "UPDATE sessions SET state = ?, active_run_id = NULL, last_run_status = ?"
            f"{touch} WHERE active_run_id = ?",
            params,
        )

    async def get(self, run_id: str) -> Run:
        row = await self._db.fetch_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
        )
        if row is None:
            raise UnknownConversation(f"run {run_id}")
        return run_from_row(row)

    async def for_session(self, conversation_id: str) -> list[Run]:
        """Every run of a session, oldest first."""
        rows = await self._db.fetch_all(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE conversation_id = ? ORDER BY started_at",
            (conversation_id,),
        )
        return [run_from_row(r) for r in rows]
