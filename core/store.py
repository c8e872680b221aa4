"""The embedded store: one SQLite file through aiosqlite.

Design points (see docs/architecture.md):
- WAL, ``synchronous=NORMAL``, foreign keys on; file 0600 in a 0700 folder.
- Sessions page newest first on ``(last_interacted_at, conversation_id)`` with
  keyset cursors; messages page newest first on ``seq``. No OFFSET anywhere.
- Every state change is one ``BEGIN IMMEDIATE`` transaction, so a refused
  request writes nothing.
- The follow-up busy guard is one conditional UPDATE: it holds across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite

from core.clock import from_us
from core.cursors import MessageCursor, SessionCursor
from core.errors import (
    AgentBusy,
    DismissRefused,
    SessionNotReady,
    StoreError,
    UnknownConversation,
)
from core.migrations import MIGRATIONS, SCHEMA_VERSION
from core.models import (
    ContextUsage,
    Message,
    Role,
    Run,
    RunKind,
    RunStatus,
    Session,
    SessionMetrics,
    SessionMode,
    SessionState,
    Usage,
)

_SESSION_COLUMNS = (
    "conversation_id, agent_id, mode, state, cwd, git_branch, title, parent_id, source,"
    " created_at, last_interacted_at, turns, message_count, token_count, bytes_on_disk,"
    " context_tokens, context_limit, last_run_status"
)
_MESSAGE_COLUMNS = "id, conversation_id, seq, role, content, created_at, token_count, tool, run_id"
_RUN_COLUMNS = (
    "run_id, conversation_id, agent_id, kind, prompt, status, started_at, finished_at,"
    " input_tokens, output_tokens, output, error, stderr"
)
# The paging queries, named so the benchmark can EXPLAIN exactly what runs
# (tests/bench/bench_core.py): each must walk an index in order, never sort.
SQL_LIST_SESSIONS = (
    f"SELECT {_SESSION_COLUMNS} FROM sessions"
    " ORDER BY last_interacted_at DESC, conversation_id DESC LIMIT ?"
)
SQL_LIST_SESSIONS_AFTER = (
    f"SELECT {_SESSION_COLUMNS} FROM sessions"
    " WHERE (last_interacted_at, conversation_id) < (?, ?)"
    " ORDER BY last_interacted_at DESC, conversation_id DESC LIMIT ?"
)
SQL_RECENT_MESSAGES = (
    f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?"
)
SQL_RECENT_MESSAGES_BEFORE = (
    f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?"
)
# The filter of the picker: a case-insensitive substring of these fields.
_MATCHES = (
    "instr(lower(agent_id || ' ' || title || ' ' || cwd || ' ' || coalesce(git_branch, '')"
    " || ' ' || conversation_id || ' ' || source), ?) > 0"
)
# States from which a follow-up may start (detached sessions only once Ready).
_RESUMABLE = (SessionState.IDLE.value, SessionState.READY.value)


@dataclass(frozen=True, slots=True)
class NewSession:
    """What a launch records about a session before its first run starts."""

    conversation_id: str
    agent_id: str
    mode: SessionMode
    cwd: str
    title: str
    created_us: int
    context_limit: int
    git_branch: str | None = None
    parent_id: str | None = None
    source: str = "delegate"


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message about to be appended; ``token_count`` is computed once, by the caller."""

    id: str
    role: Role
    content: str
    created_us: int
    token_count: int
    tool: dict[str, Any] | None = None
    run_id: str | None = None

    @property
    def size_bytes(self) -> int:
        tool = json.dumps(self.tool) if self.tool else ""
        return len(self.content.encode("utf-8", "surrogatepass")) + len(tool.encode())


@dataclass(frozen=True, slots=True)
class NewRun:
    run_id: str
    agent_id: str
    kind: RunKind
    prompt: str
    started_us: int


@dataclass(frozen=True, slots=True)
class FinishedSession:
    """A whole session to insert at once (demo data, benchmarks)."""

    session: NewSession
    messages: Sequence[NewMessage]
    last_interacted_us: int
    state: SessionState
    last_run_status: RunStatus | None = RunStatus.COMPLETED


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """A stored history event: the payload is the event's own JSON."""

    id: int
    at: int
    kind: str
    conversation_id: str | None
    run_id: str | None
    payload: dict[str, Any]


# --- imports (issue 4) ----------------------------------------------------

_BUSY = (SessionState.RUNNING.value, SessionState.PENDING.value)


@dataclass(frozen=True, slots=True)
class SourceFileRow:
    """Where the last read of a transcript file stopped, and what it had seen."""

    path: str
    size: int
    offset: int
    head_len: int
    head_hash: str
    state: dict[str, Any]
    counts: tuple[int, int, int]  # malformed, unknown, oversized lines


@dataclass(frozen=True, slots=True)
class SourceFileUpdate:
    """A transcript file just read (or that failed to read), and its session's facts."""

    path: str
    source: str
    size: int
    mtime_ns: int
    offset: int = 0
    head_len: int = 0
    head_hash: str = ""
    state_json: str = "{}"
    malformed: int = 0
    unknown: int = 0
    oversized: int = 0
    error: str | None = None
    facts: ImportedSession | None = None
    write_session: bool = True  # False when a newer file of the same id already did


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """A session as an importer describes it (see core.sources.common.SessionFacts)."""

    conversation_id: str
    source: str
    agent_id: str
    cwd: str
    git_branch: str | None
    title: str
    strong_title: bool
    parent_id: str | None
    created_us: int
    last_us: int
    turns: int
    messages: int
    tokens: int
    bytes: int
    context_tokens: int
    context_limit: int
    compactions: int


@dataclass
class ImportCommit:
    """What one :meth:`Store.apply_import` batch changed."""

    added: int = 0
    updated: int = 0
    skipped_dismissed: int = 0
    skipped_busy: int = 0
    added_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SourceFileProblem:
    path: str
    source: str
    malformed: int
    unknown: int
    oversized: int
    error: str | None


def _metric_params(s: ImportedSession) -> tuple[object, ...]:
    return (
        s.turns,
        s.messages,
        s.tokens,
        s.bytes,
        s.context_tokens,
        s.context_limit,
        s.context_limit,
        s.last_us,
    )


def _session(row: aiosqlite.Row) -> Session:
    return Session(
        conversation_id=row[0],
        agent_id=row[1],
        mode=SessionMode(row[2]),
        state=SessionState(row[3]),
        cwd=row[4],
        git_branch=row[5],
        title=row[6],
        parent_id=row[7],
        source=row[8],
        created_at=from_us(row[9]),
        last_interacted_at=from_us(row[10]),
        metrics=SessionMetrics(turns=row[11], messages=row[12], tokens=row[13], bytes=row[14]),
        context=ContextUsage(used_tokens=row[15], limit_tokens=row[16]),
        last_run_status=RunStatus(row[17]) if row[17] else None,
    )


def _message(row: aiosqlite.Row) -> Message:
    return Message(
        id=row[0],
        conversation_id=row[1],
        seq=row[2],
        role=Role(row[3]),
        content=row[4],
        created_at=from_us(row[5]),
        token_count=row[6],
        tool=json.loads(row[7]) if row[7] else None,
        run_id=row[8],
    )


def _run(row: aiosqlite.Row) -> Run:
    return Run(
        run_id=row[0],
        conversation_id=row[1],
        agent_id=row[2],
        kind=RunKind(row[3]),
        prompt=row[4],
        status=RunStatus(row[5]),
        started_at=from_us(row[6]),
        finished_at=from_us(row[7]) if row[7] is not None else None,
        usage=Usage(input_tokens=row[8], output_tokens=row[9]),
        output=row[10],
        error=row[11],
        stderr=row[12],
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class Store:
    """Async access to the delegate database. Open with :meth:`open`, close with :meth:`close`."""

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db = db
        self.path = path
        # One transaction at a time on this connection; other processes are
        # serialised by SQLite itself (BEGIN IMMEDIATE + busy_timeout).
        self._tx_lock = asyncio.Lock()

    # --- lifecycle -------------------------------------------------------

    @classmethod
    async def open(cls, path: Path) -> Store:
        """Open (creating if needed) the database file and bring its schema up to date."""
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not path.exists():
            # Create the file 0600 before SQLite does, so it is never world-readable.
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        db = await aiosqlite.connect(path, isolation_level=None)
        try:
            await db.execute("PRAGMA busy_timeout = 10000")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            store = cls(db, path)
            await store._migrate()
        except BaseException:
            await db.close()
            raise
        return store

    async def close(self) -> None:
        await self._db.close()

    async def _migrate(self) -> None:
        async with self._db.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this delegate "
                f"({SCHEMA_VERSION}); upgrade delegate"
            )
        if version == SCHEMA_VERSION:
            return
        async with self._transaction() as db:
            async with db.execute("PRAGMA user_version") as cur:
                row = await cur.fetchone()
            version = int(row[0]) if row else 0  # another process may have migrated
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _split_sql(MIGRATIONS[target]):
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {target}")

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._tx_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise
            else:
                await self._db.execute("COMMIT")

    # --- agents ----------------------------------------------------------

    async def upsert_agents(self, agents: Iterable[tuple[str, str, int]]) -> None:
        """Record configured agents: ``(agent_id, runner, context_limit)``."""
        async with self._transaction() as db:
            await db.executemany(
                "INSERT INTO agents(agent_id, runner, context_limit) VALUES (?, ?, ?)"
                " ON CONFLICT(agent_id) DO UPDATE SET runner=excluded.runner,"
                " context_limit=excluded.context_limit",
                list(agents),
            )

    # --- sessions --------------------------------------------------------

    async def get_session(self, conversation_id: str) -> Session:
        async with self._db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE conversation_id = ?",
            (conversation_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            raise UnknownConversation(conversation_id)
        return _session(row)

    async def list_sessions(
        self, limit: int, after: SessionCursor | None = None, query: str | None = None
    ) -> tuple[list[Session], SessionCursor | None]:
        """One page, newest first; the cursor names the last row when more follow.

        ``query`` keeps sessions whose agent, title, cwd, branch or id contain it
        (case-insensitive); the walk still follows the newest-first index.
        """
        if query:
            return await self._list_matching(limit, after, query)
        if after is None:
            sql = SQL_LIST_SESSIONS
            params: tuple[object, ...] = (limit + 1,)
        else:
            sql = SQL_LIST_SESSIONS_AFTER
            params = (after.last_interacted_us, after.conversation_id, limit + 1)
        # One round trip to the connection's thread: a slow query queued by another
        # task (the status counts) cannot slip in between execute and fetch.
        rows = list(await self._db.execute_fetchall(sql, params))
        return _page(rows, limit)

    async def _list_matching(
        self, limit: int, after: SessionCursor | None, query: str
    ) -> tuple[list[Session], SessionCursor | None]:
        where = [_MATCHES]
        params: list[object] = [query.lower()]
        if after is not None:
            where.append("(last_interacted_at, conversation_id) < (?, ?)")
            params += [after.last_interacted_us, after.conversation_id]
        sql = (
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)}"
            " ORDER BY last_interacted_at DESC, conversation_id DESC LIMIT ?"
        )
        rows = list(await self._db.execute_fetchall(sql, (*params, limit + 1)))
        return _page(rows, limit)

    async def count_matching(self, query: str | None = None) -> int:
        """How many sessions a filter keeps (all of them without one)."""
        sql, params = "SELECT count(*) FROM sessions", tuple[str, ...]()
        if query:
            sql, params = f"{sql} WHERE {_MATCHES}", (query.lower(),)
        async with self._db.execute(sql, params) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def fullest_sessions(self, limit: int) -> list[Session]:
        """Sessions whose context window is the most used, fullest first."""
        async with self._db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE context_limit > 0"
            " ORDER BY CAST(context_tokens AS REAL) / context_limit DESC, conversation_id"
            " LIMIT ?",
            (limit,),
        ) as cur:
            return [_session(r) for r in await cur.fetchall()]

    async def count_sessions(self) -> dict[str, int]:
        """Reusable sessions by state, plus ``bytes`` (their total footprint)."""
        counts: dict[str, int] = {}
        async with self._db.execute(
            "SELECT state, count(*), coalesce(sum(bytes_on_disk), 0) FROM sessions GROUP BY state"
        ) as cur:
            total_bytes = 0
            async for state, n, size in cur:
                counts[state] = n
                total_bytes += size
        counts["bytes"] = total_bytes
        return counts

    async def is_dismissed(self, conversation_id: str) -> bool:
        async with self._db.execute(
            "SELECT 1 FROM dismissed WHERE conversation_id = ?", (conversation_id,)
        ) as cur:
            return await cur.fetchone() is not None

    # --- runs: launch, follow-up, finish --------------------------------

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
        async with self._transaction() as db:
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
            await self._insert_run(db, session.conversation_id, run)
            await self._append_prompt(db, session.conversation_id, prompt)

    async def _append_prompt(
        self, db: aiosqlite.Connection, conversation_id: str, prompt: NewMessage | None
    ) -> None:
        """Store the prompt, or only count the turn when the agent keeps the transcript."""
        if prompt is not None:
            await self._append(db, conversation_id, [prompt])
        else:
            await db.execute(
                "UPDATE sessions SET turns = turns + 1 WHERE conversation_id = ?",
                (conversation_id,),
            )

    async def claim_follow_up(
        self, conversation_id: str, run: NewRun, prompt: NewMessage | None
    ) -> Session:
        """Atomically move a resumable session to ``running`` and record the run.

        Zero rows changed by the conditional UPDATE means another run holds the
        session (``agent_busy``), a detached launch is not Ready yet, or the id is
        unknown. A run left ``running`` by a process that died is recovered first.
        """
        for _attempt in range(2):
            async with self._transaction() as db:
                cur = await db.execute(
                    "UPDATE sessions SET state = ?, active_run_id = ?, last_interacted_at = ?"
                    f" WHERE conversation_id = ? AND state IN {_RESUMABLE}",
                    (SessionState.RUNNING.value, run.run_id, run.started_us, conversation_id),
                )
                if cur.rowcount == 1:
                    await self._insert_run(db, conversation_id, run)
                    await self._append_prompt(db, conversation_id, prompt)
                    break
            if not await self._recover_if_orphaned(conversation_id):
                session = await self.get_session(conversation_id)  # raises when unknown
                if session.state is SessionState.PENDING:
                    raise SessionNotReady(conversation_id)
                raise AgentBusy(conversation_id)
        return await self.get_session(conversation_id)

    async def _insert_run(
        self, db: aiosqlite.Connection, conversation_id: str, run: NewRun
    ) -> None:
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
        async with self._db.execute(
            "SELECT r.run_id, r.owner_pid, r.owner_host, s.mode FROM sessions s"
            " JOIN runs r ON r.run_id = s.active_run_id WHERE s.conversation_id = ?",
            (conversation_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return False
        run_id, pid, host, mode = row
        if host != socket.gethostname() or pid is None or _pid_alive(int(pid)):
            return False
        async with self._transaction() as db:
            await self._finish(
                db,
                run_id,
                RunStatus.FAILED,
                Usage(),
                "",
                f"the process running it (pid {pid}) exited before it finished",
                None,
                None,
                ready_state(SessionMode(mode)),
            )
        return True

    async def append_messages(self, conversation_id: str, messages: Sequence[NewMessage]) -> None:
        async with self._transaction() as db:
            await self._append(db, conversation_id, messages)

    async def _append(
        self, db: aiosqlite.Connection, conversation_id: str, messages: Sequence[NewMessage]
    ) -> None:
        if not messages:
            return
        async with db.execute(
            "UPDATE sessions SET next_seq = next_seq + ?, message_count = message_count + ?,"
            " token_count = token_count + ?, bytes_on_disk = bytes_on_disk + ?,"
            " turns = turns + ?, context_tokens = context_tokens + ?"
            " WHERE conversation_id = ? RETURNING next_seq",
            (
                len(messages),
                len(messages),
                sum(m.token_count for m in messages),
                sum(m.size_bytes for m in messages),
                sum(1 for m in messages if m.role is Role.USER),
                sum(m.token_count for m in messages),
                conversation_id,
            ),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            raise UnknownConversation(conversation_id)
        first_seq = int(row[0]) - len(messages)
        await db.executemany(
            f"INSERT INTO messages({_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    m.id,
                    conversation_id,
                    first_seq + i,
                    m.role.value,
                    m.content,
                    m.created_us,
                    m.token_count,
                    json.dumps(m.tool) if m.tool else None,
                    m.run_id,
                )
                for i, m in enumerate(messages)
            ],
        )

    async def finish_run(
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
        async with self._transaction() as db:
            async with db.execute(
                "SELECT s.mode, r.conversation_id FROM runs r"
                " JOIN sessions s ON s.conversation_id = r.conversation_id WHERE r.run_id = ?",
                (run_id,),
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownConversation(f"run {run_id}")
            mode, conversation_id = SessionMode(row[0]), str(row[1])
            if reply is not None:
                await self._append(db, conversation_id, [reply])
            if context_tokens is not None or context_limit is not None:
                await db.execute(
                    "UPDATE sessions SET context_tokens = coalesce(?, context_tokens),"
                    " context_limit = coalesce(?, context_limit) WHERE conversation_id = ?",
                    (context_tokens, context_limit, conversation_id),
                )
            if stderr:
                await db.execute("UPDATE runs SET stderr = ? WHERE run_id = ?", (stderr, run_id))
            await self._finish(
                db,
                run_id,
                status,
                usage,
                output,
                error,
                finished_us,
                conversation_id,
                ready_state(mode),
            )
        return await self.get_run(run_id)

    async def _finish(
        self,
        db: aiosqlite.Connection,
        run_id: str,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        finished_us: int | None,
        conversation_id: str | None,
        next_state: SessionState,
    ) -> None:
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

    async def rekey_session(self, old_id: str, new_id: str) -> None:
        """Give a session the id its agent chose (Codex names its own threads).

        Sessions, messages, runs and history move together in one transaction.
        The foreign keys have no ON UPDATE CASCADE, so their checks are deferred
        to the commit, by when every row points at the new id.
        """
        async with self._transaction() as db:
            await db.execute("PRAGMA defer_foreign_keys = ON")
            cur = await db.execute(
                "UPDATE sessions SET conversation_id = ? WHERE conversation_id = ?",
                (new_id, old_id),
            )
            if cur.rowcount != 1:
                raise UnknownConversation(old_id)
            for table in ("messages", "runs"):
                await db.execute(
                    f"UPDATE {table} SET conversation_id = ? WHERE conversation_id = ?",
                    (new_id, old_id),
                )
            await db.execute(
                "UPDATE history SET conversation_id = ?,"
                " payload = json_set(payload, '$.conversation_id', ?) WHERE conversation_id = ?",
                (new_id, new_id, old_id),
            )

    async def get_run(self, run_id: str) -> Run:
        async with self._db.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            raise UnknownConversation(f"run {run_id}")
        return _run(row)

    async def runs_for(self, conversation_id: str) -> list[Run]:
        async with self._db.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE conversation_id = ? ORDER BY started_at",
            (conversation_id,),
        ) as cur:
            return [_run(r) for r in await cur.fetchall()]

    # --- messages --------------------------------------------------------

    async def recent_messages(
        self, conversation_id: str, limit: int, before: MessageCursor | None = None
    ) -> tuple[list[Message], MessageCursor | None]:
        """Newest first; pass the returned cursor to page back to older messages."""
        if before is None:
            sql = SQL_RECENT_MESSAGES
            params: tuple[object, ...] = (conversation_id, limit + 1)
        else:
            sql = SQL_RECENT_MESSAGES_BEFORE
            params = (conversation_id, before.seq, limit + 1)
        rows = list(await self._db.execute_fetchall(sql, params))  # one round trip
        if not rows:
            await self.get_session(conversation_id)  # unknown id -> UnknownConversation
        messages = [_message(r) for r in rows[:limit]]
        if len(rows) <= limit:
            return messages, None
        return messages, MessageCursor(conversation_id, messages[-1].seq)

    # --- dismiss ---------------------------------------------------------

    async def dismiss(self, conversation_id: str, at_us: int) -> Session:
        """Remove a session and everything stored for it; remember the id as dismissed."""
        async with self._transaction() as db:
            async with db.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE conversation_id = ?",
                (conversation_id,),
            ) as cur:
                row = await cur.fetchone()
            if row is None:
                raise UnknownConversation(conversation_id)
            session = _session(row)
            if session.state is SessionState.PENDING:
                raise DismissRefused(
                    f"detached session {conversation_id!r} is still pending; "
                    "dismiss it once it is ready"
                )
            if session.state is SessionState.RUNNING:
                raise DismissRefused(
                    f"session {conversation_id!r} is still running; dismiss it when the run ends"
                )
            await db.execute(
                "INSERT OR REPLACE INTO dismissed(conversation_id, source, dismissed_at)"
                " VALUES (?, ?, ?)",
                (conversation_id, session.source, at_us),
            )
            # Messages and runs go with the session (ON DELETE CASCADE).
            await db.execute("DELETE FROM sessions WHERE conversation_id = ?", (conversation_id,))
        return session

    # --- history ---------------------------------------------------------

    async def add_history(
        self,
        at_us: int,
        kind: str,
        conversation_id: str | None,
        run_id: str | None,
        payload: dict[str, Any],
    ) -> int:
        async with self._transaction() as db:
            cur = await db.execute(
                "INSERT INTO history(at, kind, conversation_id, run_id, payload)"
                " VALUES (?, ?, ?, ?, ?)",
                (at_us, kind, conversation_id, run_id, json.dumps(payload)),
            )
            return int(cur.lastrowid or 0)

    async def history(self, limit: int, before_id: int | None = None) -> list[HistoryRow]:
        """Newest first, keyset on the event id."""
        sql = "SELECT id, at, kind, conversation_id, run_id, payload FROM history"
        params: tuple[object, ...] = (limit,)
        if before_id is not None:
            sql += " WHERE id < ?"
            params = (before_id, limit)
        async with self._db.execute(sql + " ORDER BY id DESC LIMIT ?", params) as cur:
            return [
                HistoryRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]))
                for r in await cur.fetchall()
            ]

    # --- bulk (demo data, benchmarks) ------------------------------------

    async def has_session(self, conversation_id: str) -> bool:
        async with self._db.execute(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ) as cur:
            return await cur.fetchone() is not None

    async def bulk_insert(self, sessions: Sequence[FinishedSession]) -> None:
        """Insert finished sessions with their messages in one transaction."""
        async with self._transaction() as db:
            await db.executemany(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch,"
                " title, parent_id, source, created_at, last_interacted_at, context_limit,"
                " last_run_status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        f.session.conversation_id,
                        f.session.agent_id,
                        f.session.mode.value,
                        f.state.value,
                        f.session.cwd,
                        f.session.git_branch,
                        f.session.title,
                        f.session.parent_id,
                        f.session.source,
                        f.session.created_us,
                        f.last_interacted_us,
                        f.session.context_limit,
                        f.last_run_status.value if f.last_run_status else None,
                    )
                    for f in sessions
                ],
            )
            for f in sessions:
                await self._append(db, f.session.conversation_id, f.messages)

    # --- imports (issue 4): the transcript index and imported sessions ---
    # Sessions another agent wrote are rows of ``sessions`` (source 'claude-code'
    # or 'codex'); their messages stay in the transcript file, which
    # core.sources.preview reads backwards. ``source_files`` remembers how far
    # each file was read (docs/import.md).

    async def source_file_stats(self) -> dict[str, tuple[int, int]]:
        """``path -> (size, mtime_ns)`` of every indexed file: all a re-scan compares."""
        rows = await self._db.execute_fetchall("SELECT path, size, mtime_ns FROM source_files")
        return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}

    async def source_file_rows(self, paths: Sequence[str]) -> dict[str, SourceFileRow]:
        """The saved read position and parse state of these files."""
        found: dict[str, SourceFileRow] = {}
        for i in range(0, len(paths), 500):
            chunk = list(paths[i : i + 500])
            marks = ", ".join("?" * len(chunk))
            rows = await self._db.execute_fetchall(
                "SELECT path, size, read_offset, head_len, head_hash, parse_state,"
                " malformed_lines, unknown_lines, oversized_lines"
                f" FROM source_files WHERE path IN ({marks})",
                chunk,
            )
            for r in rows:
                found[str(r[0])] = SourceFileRow(
                    path=str(r[0]),
                    size=int(r[1]),
                    offset=int(r[2]),
                    head_len=int(r[3]),
                    head_hash=str(r[4]),
                    state=json.loads(r[5]),
                    counts=(int(r[6]), int(r[7]), int(r[8])),
                )
        return found

    async def apply_import(self, files: Sequence[SourceFileUpdate], at_us: int) -> ImportCommit:
        """Record a batch of read files and the sessions they describe, in one transaction.

        Dismissed ids are never re-created. A session delegate is running (state
        running or pending) is left untouched; another existing session with the
        same id (e.g. launched by delegate through the real CLI) has its metrics
        and title updated instead of being duplicated.
        """
        commit = ImportCommit()
        async with self._transaction() as db:
            failed = [f for f in files if f.error is not None]
            read = [f for f in files if f.error is None]
            # A file that could not be read keeps its position; size -1 makes
            # the next scan try it again.
            await db.executemany(
                "INSERT INTO source_files(path, source, size, mtime_ns, last_error, scanned_at)"
                " VALUES (?, ?, -1, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = -1,"
                " mtime_ns = excluded.mtime_ns, last_error = excluded.last_error,"
                " scanned_at = excluded.scanned_at",
                [(f.path, f.source, f.mtime_ns, f.error, at_us) for f in failed],
            )
            await db.executemany(
                "INSERT OR REPLACE INTO source_files(path, source, size, mtime_ns, read_offset,"
                " head_len, head_hash, conversation_id, malformed_lines, unknown_lines,"
                " oversized_lines, compactions, last_error, parse_state, scanned_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                [
                    (
                        f.path,
                        f.source,
                        f.size,
                        f.mtime_ns,
                        f.offset,
                        f.head_len,
                        f.head_hash,
                        f.facts.conversation_id if f.facts else None,
                        f.malformed,
                        f.unknown,
                        f.oversized,
                        f.facts.compactions if f.facts else 0,
                        f.state_json,
                        at_us,
                    )
                    for f in read
                ],
            )
            facts = [f.facts for f in read if f.facts is not None and f.write_session]
            if not facts:
                return commit
            ids = [s.conversation_id for s in facts]
            marks = ", ".join("?" * len(ids))
            dismissed = {
                str(r[0])
                for r in await db.execute_fetchall(
                    f"SELECT conversation_id FROM dismissed WHERE conversation_id IN ({marks})", ids
                )
            }
            existing = {
                str(r[0]): (str(r[1]), str(r[2]))
                for r in await db.execute_fetchall(
                    "SELECT conversation_id, state, source FROM sessions"
                    f" WHERE conversation_id IN ({marks})",
                    ids,
                )
            }
            inserts, updates, delegate_updates = [], [], []
            for s in facts:
                if s.conversation_id in dismissed:
                    commit.skipped_dismissed += 1
                elif s.conversation_id not in existing:
                    inserts.append(s)
                elif existing[s.conversation_id][0] in _BUSY:
                    commit.skipped_busy += 1
                elif existing[s.conversation_id][1] == "delegate":
                    delegate_updates.append(s)
                else:
                    updates.append(s)
            await db.executemany(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch,"
                " title, parent_id, source, created_at, last_interacted_at, turns, message_count,"
                " token_count, bytes_on_disk, context_tokens, context_limit)"
                " VALUES (?, ?, 'standard', 'idle', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        s.conversation_id,
                        s.agent_id,
                        s.cwd,
                        s.git_branch,
                        s.title,
                        s.parent_id,
                        s.source,
                        s.created_us,
                        s.last_us,
                        s.turns,
                        s.messages,
                        s.tokens,
                        s.bytes,
                        s.context_tokens,
                        s.context_limit,
                    )
                    for s in inserts
                ],
            )
            busy = ", ".join(f"'{state}'" for state in _BUSY)
            metrics = (
                "turns = ?, message_count = ?, token_count = ?, bytes_on_disk = ?,"
                " context_tokens = ?,"
                " context_limit = CASE WHEN ? > 0 THEN ? ELSE context_limit END,"
                " last_interacted_at = max(last_interacted_at, ?)"
            )
            await db.executemany(
                f"UPDATE sessions SET cwd = ?, git_branch = ?, title = ?, parent_id = ?,"
                f" created_at = min(created_at, ?), {metrics}"
                f" WHERE conversation_id = ? AND state NOT IN ({busy})",
                [
                    (
                        s.cwd,
                        s.git_branch,
                        s.title,
                        s.parent_id,
                        s.created_us,
                        *_metric_params(s),
                        s.conversation_id,
                    )
                    for s in updates
                ],
            )
            await db.executemany(
                "UPDATE sessions SET title = CASE WHEN ? THEN ? ELSE title END,"
                f" {metrics} WHERE conversation_id = ? AND state NOT IN ({busy})",
                [
                    (s.strong_title, s.title, *_metric_params(s), s.conversation_id)
                    for s in delegate_updates
                ],
            )
            commit.added = len(inserts)
            commit.updated = len(updates) + len(delegate_updates)
            commit.added_ids = [s.conversation_id for s in inserts]
        return commit

    async def transcript_for(self, conversation_id: str) -> tuple[str, str, bool] | None:
        """``(path, source, prompts_in_items)`` of the transcript a session is read from.

        None for sessions whose messages live in our ``messages`` table: those
        delegate ran itself, unless it stored none (a real CLI keeps its own).
        ``prompts_in_items``: a Codex rollout that logs prompts only as response
        items (``codex exec``), known from the importer's running totals.
        """
        rows = await self._db.execute_fetchall(
            "SELECT f.path, f.source,"
            " f.source = 'codex' AND coalesce(json_extract(f.parse_state, '$.turns'), 0) = 0"
            " FROM sessions s"
            " JOIN source_files f ON f.conversation_id = s.conversation_id"
            " WHERE s.conversation_id = ? AND (s.source != 'delegate' OR NOT EXISTS"
            " (SELECT 1 FROM messages m WHERE m.conversation_id = s.conversation_id))"
            " ORDER BY f.mtime_ns DESC LIMIT 1",
            (conversation_id,),
        )
        for r in rows:
            return str(r[0]), str(r[1]), bool(r[2])
        return None

    async def save_import_report(self, at_us: int, report: str, keep: int = 20) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO import_reports(finished_at, report) VALUES (?, ?)", (at_us, report)
            )
            await db.execute(
                "DELETE FROM import_reports WHERE id NOT IN"
                " (SELECT id FROM import_reports ORDER BY id DESC LIMIT ?)",
                (keep,),
            )

    async def last_import_report(self) -> str | None:
        rows = await self._db.execute_fetchall(
            "SELECT report FROM import_reports ORDER BY id DESC LIMIT 1"
        )
        for r in rows:
            return str(r[0])
        return None

    async def source_file_problems(self, limit: int) -> tuple[int, list[SourceFileProblem]]:
        """Files with skipped lines or a read error: how many, and the first ``limit``."""
        where = (
            " WHERE malformed_lines + unknown_lines + oversized_lines > 0 OR last_error IS NOT NULL"
        )
        rows = await self._db.execute_fetchall(f"SELECT count(*) FROM source_files{where}")
        total = int(next(iter(rows))[0])
        rows = await self._db.execute_fetchall(
            "SELECT path, source, malformed_lines, unknown_lines, oversized_lines, last_error"
            f" FROM source_files{where} ORDER BY last_error IS NULL, path LIMIT ?",
            (limit,),
        )
        return total, [
            SourceFileProblem(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]), r[5])
            for r in rows
        ]


def _page(rows: list[aiosqlite.Row], limit: int) -> tuple[list[Session], SessionCursor | None]:
    """Rows fetched with ``LIMIT limit + 1``: the page and, when more follow, its cursor."""
    sessions = [_session(r) for r in rows[:limit]]
    if len(rows) <= limit:
        return sessions, None
    last = rows[limit - 1]
    return sessions, SessionCursor(int(last[10]), str(last[0]))


def ready_state(mode: SessionMode) -> SessionState:
    """Where a session rests between runs: detached sessions wait as Ready."""
    return SessionState.READY if mode is SessionMode.DETACHED else SessionState.IDLE


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
