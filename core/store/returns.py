"""Compact-return steps: one row per role's run in a group's chain (``return_steps``).

A step's ``seq`` (1, 2, ... within its artifacts session and group) is assigned
by the insert itself, inside one ``BEGIN IMMEDIATE`` transaction, so parallel
writers — coroutines of one process or several processes on one file — never
take the same number and never leave a gap.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiosqlite

from core.returns.model import END, AgentRole, ReturnStep
from core.returns.model import ReturnSession as ReturnSession  # re-exported: core.store's name
from core.store.database import Database
from core.store.rows import clamp_count, clamp_int, clamp_time

_COLUMNS = (
    "step_id, artifacts_session, group_id, role, seq, status, summary, run_id,"
    " conversation_id, document_id, handoff_path, next_role, rule, reason, tokens, created_at"
)
MAX_LISTED = 5_000
"""Steps listed per artifacts session, at most (a chain stops after a few dozen)."""
MAX_SESSIONS = 1_000
"""Artifacts sessions listed, at most, newest first."""
_ROLES = {role.value: role for role in AgentRole}


@dataclass(frozen=True, slots=True)
class NewReturnStep:
    """A step about to be recorded; the store assigns its ``seq``."""

    artifacts_session: str
    group_id: str
    role: AgentRole
    status: str
    summary: Sequence[str]
    created_us: int
    run_id: str | None = None
    conversation_id: str | None = None
    document_id: str | None = None
    handoff_path: str | None = None
    next_role: str | None = None
    rule: str | None = None
    reason: str = ""
    tokens: int = 0
    step_id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass(frozen=True, slots=True)
class DeletedReturns:
    """What :meth:`ReturnStepsRepository.delete_session` removed."""

    steps: int
    documents: int


class ReturnStepsRepository:
    """The ``return_steps`` table (and, on delete, the ``return`` documents it names)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, step: NewReturnStep) -> ReturnStep:
        """Record ``step`` as the next of its group; the stored step with its ``seq``."""
        async with self._db.transaction() as db:
            await db.execute(
                f"INSERT INTO return_steps({_COLUMNS})"
                " SELECT ?, ?, ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
                " FROM return_steps WHERE artifacts_session = ? AND group_id = ?",
                (
                    step.step_id,
                    step.artifacts_session,
                    step.group_id,
                    step.role.value,
                    step.status,
                    json.dumps(list(step.summary), ensure_ascii=False),
                    step.run_id,
                    step.conversation_id,
                    step.document_id,
                    step.handoff_path,
                    step.next_role,
                    step.rule,
                    step.reason,
                    max(0, step.tokens),
                    step.created_us,
                    step.artifacts_session,
                    step.group_id,
                ),
            )
            rows = await db.execute_fetchall(
                f"SELECT {_COLUMNS} FROM return_steps WHERE step_id = ?", (step.step_id,)
            )
        stored = [s for s in (_step(row) for row in rows) if s is not None]
        return stored[0]

    async def get(self, step_id: str) -> ReturnStep | None:
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM return_steps WHERE step_id = ?", (step_id,)
        )
        return None if row is None else _step(row)

    async def by_run(self, run_id: str) -> ReturnStep | None:
        """The step recorded for ``run_id`` (the newest, should there be two)."""
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM return_steps WHERE run_id = ?"
            " ORDER BY created_at DESC, seq DESC LIMIT 1",
            (run_id,),
        )
        return None if row is None else _step(row)

    async def for_session(self, session: str, group: str | None = None) -> list[ReturnStep]:
        """The session's steps (of ``group`` only, when given), by group then ``seq``.

        Empty when none are recorded; rows naming a role this delegate does not
        know (written by a newer one) are left out.
        """
        where, params = "artifacts_session = ?", [session]
        if group is not None:
            where += " AND group_id = ?"
            params.append(group)
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM return_steps WHERE {where} ORDER BY group_id, seq LIMIT ?",
            (*params, MAX_LISTED),
        )
        return [s for s in (_step(row) for row in rows) if s is not None]

    async def latest(self, session: str, group: str) -> ReturnStep | None:
        """The group's last step so far (highest ``seq``), if any."""
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM return_steps WHERE artifacts_session = ? AND group_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session, group),
        )
        return None if row is None else _step(row)

    async def latest_document(self, session: str, group: str) -> str | None:
        """The hand-off document of the group's last step that registered one."""
        row = await self._db.fetch_one(
            "SELECT document_id FROM return_steps WHERE artifacts_session = ? AND group_id = ?"
            " AND document_id IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (session, group),
        )
        return None if row is None else str(row[0])

    async def sessions(
        self, limit: int = MAX_SESSIONS, *, ended_before_us: int | None = None
    ) -> list[ReturnSession]:
        """Artifacts sessions with steps, the most recently active first.

        ``ended_before_us``: only sessions whose every group has ended and whose last
        step is older than that (what retention looks for; the oldest are not crowded
        out by newer sessions).
        """
        having = ""
        params: list[object] = [END]
        if ended_before_us is not None:
            having = " HAVING running = 0 AND last_at < ?"
            params.append(ended_before_us)
        rows = await self._db.fetch_all(
            "WITH last AS ("
            "  SELECT artifacts_session, group_id, MAX(seq) AS seq, COUNT(*) AS steps,"
            "   MAX(created_at) AS at FROM return_steps GROUP BY artifacts_session, group_id"
            ")"
            " SELECT l.artifacts_session AS session, COUNT(*) AS groups, SUM(l.steps) AS steps,"
            "  MAX(l.at) AS last_at,"
            "  SUM(CASE WHEN r.next_role IS NULL OR r.next_role = ? THEN 0 ELSE 1 END)"
            "   AS running"
            " FROM last l JOIN return_steps r ON r.artifacts_session = l.artifacts_session"
            "  AND r.group_id = l.group_id AND r.seq = l.seq"
            f" GROUP BY l.artifacts_session{having} ORDER BY last_at DESC, session LIMIT ?",
            (*params, limit),
        )
        return [
            ReturnSession(
                artifacts_session=str(row["session"]),
                groups=clamp_count(row["groups"]),
                steps=clamp_count(row["steps"]),
                running=clamp_count(row["running"]),
                last_at=clamp_time(row["last_at"]),
            )
            for row in rows
        ]

    async def handoff_paths(self, session: str) -> list[str]:
        """The distinct hand-off paths the session's steps name (where its folders are)."""
        rows = await self._db.fetch_all(
            "SELECT DISTINCT handoff_path FROM return_steps"
            " WHERE artifacts_session = ? AND handoff_path IS NOT NULL ORDER BY handoff_path",
            (session,),
        )
        return [str(row[0]) for row in rows]

    async def delete_session(self, session: str, folders: Sequence[str] = ()) -> DeletedReturns:
        """Forget the session's steps and the ``return`` documents they name, in one go.

        ``folders``: the session's artifacts folders (absolute); ``return`` documents
        registered at a path inside one go too, even when no step names them.
        """
        async with self._db.transaction() as db:
            rows = await db.execute_fetchall(
                "SELECT DISTINCT document_id FROM return_steps"
                " WHERE artifacts_session = ? AND document_id IS NOT NULL",
                (session,),
            )
            ids = {str(row[0]) for row in rows}
            for folder in folders:
                prefix = folder.rstrip("/\\") + os.sep
                rows = await db.execute_fetchall(
                    "SELECT document_id FROM documents WHERE kind = 'return'"
                    " AND substr(path, 1, ?) = ?",
                    (len(prefix), prefix),
                )
                ids.update(str(row[0]) for row in rows)
            cursor = await db.execute(
                "DELETE FROM return_steps WHERE artifacts_session = ?", (session,)
            )
            steps = max(0, cursor.rowcount)
            documents = 0
            for document_id in sorted(ids):
                cursor = await db.execute(
                    "DELETE FROM documents WHERE document_id = ? AND kind = 'return'",
                    (document_id,),
                )
                documents += max(0, cursor.rowcount)
        return DeletedReturns(steps=steps, documents=documents)


def _summary(value: object) -> tuple[str, ...]:
    try:
        loaded = json.loads(str(value or "[]"))
    except ValueError:
        return ()
    if not isinstance(loaded, list):
        return ()
    return tuple(str(line) for line in loaded)


def _step(row: aiosqlite.Row) -> ReturnStep | None:
    role = _ROLES.get(str(row["role"]))
    if role is None:
        return None
    return ReturnStep(
        step_id=str(row["step_id"]),
        artifacts_session=str(row["artifacts_session"]),
        group_id=str(row["group_id"]),
        role=role,
        seq=clamp_int(row["seq"], 0),
        status=str(row["status"]),
        summary=_summary(row["summary"]),
        created_us=clamp_int(row["created_at"]),
        run_id=row["run_id"],
        conversation_id=row["conversation_id"],
        document_id=row["document_id"],
        handoff_path=row["handoff_path"],
        next_role=row["next_role"],
        rule=row["rule"],
        reason=str(row["reason"] or ""),
        tokens=clamp_count(row["tokens"]),
    )
