"""Imports: the index of transcript files another agent wrote, and import reports.

Sessions another agent wrote are rows of ``sessions`` (source ``claude-code``
or ``codex``); their messages stay in the transcript file, which
core.sources.preview reads backwards. ``source_files`` remembers how far each
file was read (docs/import.md).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import aiosqlite

from core.data_folder import connect_read_only
from core.models import SessionState
from core.store.context import RATE_TURNS, TREND_TURNS, _rate, record_samples_in
from core.store.database import Database
from core.store.rows import (
    ImportCommit,
    ImportedSession,
    SourceFileProblem,
    SourceFileRow,
    SourceFileUpdate,
    TranscriptFile,
)

_BUSY = (SessionState.RUNNING.value, SessionState.PENDING.value)
_STATS_SQL = "SELECT path, size, mtime_ns FROM source_files"


def file_stats_at(store_path: Path) -> dict[str, tuple[int, int]]:
    """``path -> (size, mtime_ns)`` of every indexed file, read without the event loop.

    For a re-scan's thread: one query on a short-lived read-only connection
    (its own WAL snapshot), rows turned into the dict as they come, so a large
    index is never held twice. Raises ``sqlite3.Error`` when the file cannot be
    opened that way (the caller then asks :meth:`ImportsRepository.file_stat_rows`).
    """
    conn = connect_read_only(store_path, timeout=5.0)
    try:
        return {str(p): (int(s), int(m)) for p, s, m in conn.execute(_STATS_SQL)}
    finally:
        conn.close()


# A window the session already has stays when it was clamped, when the import
# knows nothing better, or when it was configured and the agent recorded none.
_KEEP_WINDOW = (
    "(window_source = 'clamp' OR ?1 = '' OR (window_source = 'config' AND ?1 <> 'recorded'))"
)
_METRICS = (
    "turns = ?2, message_count = ?3, token_count = ?4, bytes_on_disk = ?5,"
    " context_tokens = ?6,"
    f" context_limit = CASE WHEN {_KEEP_WINDOW} OR ?7 <= 0 THEN context_limit ELSE ?7 END,"
    f" window_source = CASE WHEN {_KEEP_WINDOW} OR ?7 <= 0 THEN window_source ELSE ?1 END,"
    " model = coalesce(?8, model),"
    " context_known = ?9, context_estimated = ?10,"
    " last_interacted_at = max(last_interacted_at, ?11)"
)


def _metric_params(s: ImportedSession) -> tuple[object, ...]:
    """``?1`` .. ``?11`` of ``_METRICS``."""
    return (
        s.window_source.value,
        s.turns,
        s.messages,
        s.tokens,
        s.bytes,
        s.context_tokens,
        s.context_limit,
        s.model,
        s.context_known,
        s.context_estimated,
        s.last_us,
    )


class ImportsRepository:
    """``source_files`` and ``import_reports``, and the sessions an import brings."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def file_stat_rows(self) -> list[tuple[str, int, int]]:
        """``(path, size, mtime_ns)`` of every indexed file, as the database gives them.

        One query; the caller turns them into whatever it compares with (in a
        thread, for a large index).
        """
        rows = await self._db.fetch_all(_STATS_SQL)
        return rows  # type: ignore[return-value]  # sqlite3.Row unpacks as a tuple

    async def file_rows(self, paths: Sequence[str]) -> dict[str, SourceFileRow]:
        """The saved read position and parse state of these files."""
        found: dict[str, SourceFileRow] = {}
        for i in range(0, len(paths), 500):
            chunk = list(paths[i : i + 500])
            marks = ", ".join("?" * len(chunk))
            rows = await self._db.fetch_all(
                "SELECT path, size, read_offset, head_len, head_hash, parse_state,"
                " malformed_lines, unknown_lines, oversized_lines"
                f" FROM source_files WHERE path IN ({marks})",
                chunk,
            )
            for r in rows:
                found[str(r["path"])] = SourceFileRow(
                    path=str(r["path"]),
                    size=int(r["size"]),
                    offset=int(r["read_offset"]),
                    head_len=int(r["head_len"]),
                    head_hash=str(r["head_hash"]),
                    state=json.loads(r["parse_state"]),
                    counts=(
                        int(r["malformed_lines"]),
                        int(r["unknown_lines"]),
                        int(r["oversized_lines"]),
                    ),
                )
        return found

    async def apply(
        self,
        files: Sequence[SourceFileUpdate],
        at_us: int,
        also: Callable[[aiosqlite.Connection], Awaitable[None]] | None = None,
    ) -> ImportCommit:
        """Record a batch of read files and the sessions they describe, in one transaction.

        Dismissed ids are never re-created. A session delegate is running (state
        running or pending) is left untouched; another existing session with the
        same id (e.g. launched by delegate through the real CLI) has its metrics
        and title updated instead of being duplicated. ``also`` runs last, in
        the same transaction (core.search indexes what the batch read).
        """
        commit = ImportCommit()
        async with self._db.transaction() as db:
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
                if also is not None:
                    await also(db)
                return commit
            ids = [s.conversation_id for s in facts]
            marks = ", ".join("?" * len(ids))
            dismissed = {
                str(r["conversation_id"])
                for r in await db.execute_fetchall(
                    f"SELECT conversation_id FROM dismissed WHERE conversation_id IN ({marks})", ids
                )
            }
            existing = {
                str(r["conversation_id"]): (str(r["state"]), str(r["source"]))
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
                " token_count, bytes_on_disk, context_tokens, context_limit, warmup,"
                " context_known, context_estimated, model, window_source, counting)"
                " VALUES (?, ?, 'standard', 'idle',"
                " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        int(s.warmup),
                        s.context_known,
                        s.context_estimated,
                        s.model,
                        s.window_source.value,
                        int(s.counting),
                    )
                    for s in inserts
                ],
            )
            busy = ", ".join(f"'{state}'" for state in _BUSY)
            await db.executemany(
                "UPDATE sessions SET cwd = ?12, git_branch = ?13, title = ?14, parent_id = ?15,"
                f" warmup = ?16, created_at = min(created_at, ?17), {_METRICS}, counting = ?19"
                f" WHERE conversation_id = ?18 AND state NOT IN ({busy})",
                [
                    (
                        *_metric_params(s),
                        s.cwd,
                        s.git_branch,
                        s.title,
                        s.parent_id,
                        int(s.warmup),
                        s.created_us,
                        s.conversation_id,
                        int(s.counting),
                    )
                    for s in updates
                ],
            )
            await db.executemany(
                "UPDATE sessions SET title = CASE WHEN ?12 THEN ?13 ELSE title END,"
                f" {_METRICS}, counting = ?15"
                f" WHERE conversation_id = ?14 AND state NOT IN ({busy})",
                [
                    (
                        *_metric_params(s),
                        s.strong_title,
                        s.title,
                        s.conversation_id,
                        int(s.counting),
                    )
                    for s in delegate_updates
                ],
            )
            commit.added = len(inserts)
            commit.updated = len(updates) + len(delegate_updates)
            commit.added_ids = [s.conversation_id for s in inserts]
            if also is not None:
                await also(db)
        return commit

    async def transcript_for(self, conversation_id: str) -> TranscriptFile | None:
        """The transcript a session is read from.

        None for sessions whose messages live in our ``messages`` table: those
        delegate ran itself, unless it stored none (a real CLI keeps its own).
        """
        rows = await self._db.fetch_all(
            "SELECT f.path, f.source,"
            " f.source = 'codex' AND coalesce(json_extract(f.parse_state, '$.turns'), 0) = 0"
            " AS prompts_in_items"
            " FROM sessions s"
            " JOIN source_files f ON f.conversation_id = s.conversation_id"
            " WHERE s.conversation_id = ? AND (s.source != 'delegate' OR NOT EXISTS"
            " (SELECT 1 FROM messages m WHERE m.conversation_id = s.conversation_id))"
            " ORDER BY f.mtime_ns DESC LIMIT 1",
            (conversation_id,),
        )
        for r in rows:
            return TranscriptFile(str(r["path"]), str(r["source"]), bool(r["prompts_in_items"]))
        return None

    async def source_path(self, conversation_id: str) -> str | None:
        """The transcript file another agent wrote for this session (the newest), or None."""
        found = await self.source_file(conversation_id)
        return found[0] if found is not None else None

    async def source_file(self, conversation_id: str) -> tuple[str, str | None] | None:
        """``(path, model)`` of this session's newest transcript file, or None.

        ``model`` is the one the importer saw last (kept in its running state).
        """
        rows = await self._db.fetch_all(
            "SELECT path, json_extract(parse_state, '$.model') AS model FROM source_files"
            " WHERE conversation_id = ? ORDER BY mtime_ns DESC LIMIT 1",
            (conversation_id,),
        )
        for r in rows:
            model = r["model"]
            return str(r["path"]), model if isinstance(model, str) and model else None
        return None

    async def save_report(self, at_us: int, report: str, keep: int = 20) -> None:
        async with self._db.transaction() as db:
            await db.execute(
                "INSERT INTO import_reports(finished_at, report) VALUES (?, ?)", (at_us, report)
            )
            await db.execute(
                "DELETE FROM import_reports WHERE id NOT IN"
                " (SELECT id FROM import_reports ORDER BY id DESC LIMIT ?)",
                (keep,),
            )

    async def last_report(self) -> str | None:
        rows = await self._db.fetch_all(
            "SELECT report FROM import_reports ORDER BY id DESC LIMIT 1"
        )
        for r in rows:
            return str(r["report"])
        return None

    async def file_problems(self, limit: int) -> tuple[int, int, list[SourceFileProblem]]:
        """Files with skipped lines or a read error: how many, how many of them are
        damaged (malformed or oversized lines, a read error: not only lines of a type
        the importer does not know), and the first ``limit``."""
        # The first term is the partial index's condition, so the index is used.
        where = (
            " WHERE malformed_lines + unknown_lines + oversized_lines > 0 OR last_error IS NOT NULL"
        )
        damaged = "malformed_lines + oversized_lines > 0 OR last_error IS NOT NULL"
        # One round trip: the counts are windows over every match, taken before LIMIT.
        rows = await self._db.fetch_all(
            f"SELECT count(*) OVER () AS n, sum({damaged}) OVER () AS damaged,"
            " path, source, malformed_lines, unknown_lines,"
            f" oversized_lines, last_error FROM source_files{where}"
            f" ORDER BY last_error IS NULL, NOT ({damaged}), path LIMIT ?",
            (max(1, limit),),
        )
        total = int(rows[0]["n"]) if rows else 0
        damaged_total = int(rows[0]["damaged"] or 0) if rows else 0
        if limit < 1:
            rows = []
        return (
            total,
            damaged_total,
            [
                SourceFileProblem(
                    str(r["path"]),
                    str(r["source"]),
                    int(r["malformed_lines"]),
                    int(r["unknown_lines"]),
                    int(r["oversized_lines"]),
                    r["last_error"],
                )
                for r in rows
            ],
        )


SampleSet = tuple[str, Sequence[tuple[int, int]], int, int, bool]
"""``(conversation_id, samples, limit_tokens, at_us, replace)`` of one imported session."""


async def record_import_samples(db: aiosqlite.Connection, sets: Sequence[SampleSet]) -> None:
    """:func:`core.store.context.record_samples_in` (``unless_busy``) for a whole batch.

    The same rows as one call per session, in a fixed number of statements
    (not six per session): a session that is not stored, or that a run holds
    now, gets none; ``replace`` drops its older samples first; the last
    ``TREND_TURNS`` are kept and ``tokens_per_turn`` is updated. A session
    named twice is recorded call by call, in order.
    """
    sets = [s for s in sets if s[1]]
    if not sets:
        return
    names = [s[0] for s in sets]
    if len(set(names)) != len(names):
        for cid, samples, limit, at_us, replace in sets:
            await record_samples_in(
                db, cid, samples, limit, at_us, replace=replace, unless_busy=True
            )
        return
    states: dict[str, str] = {}
    for i in range(0, len(names), 500):
        chunk = names[i : i + 500]
        marks = ", ".join("?" * len(chunk))
        for r in await db.execute_fetchall(
            f"SELECT conversation_id, state FROM sessions WHERE conversation_id IN ({marks})",
            chunk,
        ):
            states[str(r[0])] = str(r[1])
    sets = [s for s in sets if s[0] in states and states[s[0]] not in _BUSY]
    if not sets:
        return
    await db.executemany(
        "DELETE FROM context_samples WHERE conversation_id = ?", [(s[0],) for s in sets if s[4]]
    )
    await db.executemany(
        "INSERT INTO context_samples(conversation_id, turn, used_tokens, limit_tokens, at)"
        " VALUES (?1, ?2, ?3, ?4, ?5)"
        " ON CONFLICT (conversation_id, turn) DO UPDATE SET"
        " used_tokens = excluded.used_tokens, limit_tokens = excluded.limit_tokens,"
        " at = excluded.at",
        [
            (cid, turn, used, limit, at_us)
            for cid, samples, limit, at_us, _replace in sets
            for turn, used in samples
        ],
    )
    await db.executemany(
        "DELETE FROM context_samples WHERE conversation_id = ? AND turn <= ?",
        [(cid, max(turn for turn, _ in samples) - TREND_TURNS) for cid, samples, *_ in sets],
    )
    kept: dict[str, list[tuple[int, int]]] = {s[0]: [] for s in sets}
    ids = list(kept)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ", ".join("?" * len(chunk))
        for r in await db.execute_fetchall(
            "SELECT conversation_id, turn, used_tokens FROM context_samples"
            f" WHERE conversation_id IN ({marks})",
            chunk,
        ):
            kept[str(r[0])].append((int(r[1]), int(r[2])))
    await db.executemany(
        "UPDATE sessions SET tokens_per_turn = ? WHERE conversation_id = ?",
        [(_rate(sorted(rows, reverse=True)[: RATE_TURNS + 1]), cid) for cid, rows in kept.items()],
    )
