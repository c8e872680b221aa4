"""Stores written by released versions open with today's code, data intact.

Each old store is built from the released migrations' own SQL and filled with
rows as that version wrote them, then opened through the public API.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import db_path, json_out, run_cli, write_config

from core.migrations import MIGRATIONS, SCHEMA_VERSION
from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.store.database import _split_sql

US = 1_700_000_000_000_000


def _build(path: Path, version: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = WAL")
        for target in range(1, version + 1):
            for statement in _split_sql(MIGRATIONS[target]):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {target}")
        db.execute("INSERT INTO agents VALUES ('echo', 'scripted', 200000)")
        sessions = [
            ("idle-1", "idle", 3, 120, None),
            ("ready-1", "ready", 1, 40, None),
            ("running-1", "running", 1, 10, "run-live"),
        ]
        for i, (cid, state, turns, size, active) in enumerate(sessions):
            db.execute(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, title,"
                " created_at, last_interacted_at, turns, message_count, token_count,"
                " bytes_on_disk, context_tokens, context_limit, next_seq, active_run_id,"
                " last_run_status) VALUES (?, 'echo', ?, ?, '/tmp/p', ?, ?, ?, ?, 2, 8, ?, 8,"
                " 200000, 2, ?, 'completed')",
                (
                    cid,
                    "detached" if state == "ready" else "standard",
                    state,
                    f"Überprüfung {cid}",
                    US + i,
                    US + 10 + i,
                    turns,
                    size,
                    active,
                ),
            )
            for seq in range(2):
                db.execute(
                    "INSERT INTO messages(conversation_id, seq, id, role, content, created_at,"
                    " token_count) VALUES (?, ?, ?, ?, ?, ?, 4)",
                    (cid, seq, f"{cid}/m{seq}", ("user", "assistant")[seq], f"m{seq}", US + seq),
                )
        db.execute(
            "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status,"
            " started_at, finished_at, output, owner_pid, owner_host)"
            " VALUES ('run-old', 'idle-1', 'echo', 'launch', 'p', 'completed', ?, ?, 'ok', 1, 'h')",
            (US, US + 5),
        )
        # A run in flight, owned by a process of another host: left alone.
        db.execute(
            "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status,"
            " started_at, owner_pid, owner_host)"
            " VALUES ('run-live', 'running-1', 'echo', 'follow_up', 'p', 'running', ?, 4242,"
            " 'another-host')",
            (US,),
        )
        db.execute(
            "INSERT INTO history(at, kind, conversation_id, run_id, payload) VALUES (?,"
            " 'session_dismissed', 'gone', NULL, ?)",
            (
                US,
                '{"at": "2023-11-14T22:13:20Z", "conversation_id": "gone",'
                ' "kind": "session_dismissed", "agent_id": "echo", "title": "t"}',
            ),
        )
        db.execute("INSERT INTO dismissed VALUES ('gone', 'delegate', ?)", (US,))
        if version >= 2:
            db.execute(
                "INSERT INTO source_files(path, source, size, mtime_ns, scanned_at)"
                " VALUES ('/x.jsonl', 'claude-code', 10, 1, ?)",
                (US,),
            )
            db.execute("INSERT INTO import_reports(finished_at, report) VALUES (?, '{}')", (US,))


def _names(path: Path, kind: str) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))}


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
async def test_an_old_store_opens_with_its_data_intact(tmp_path: Path, version: int) -> None:
    data_dir = write_config(tmp_path / "data")
    path = db_path(data_dir)
    _build(path, version)

    orch = await AgentOrchestrator.open(data_dir)
    try:
        page = await orch.list_sessions(limit=10)
        assert [s.conversation_id for s in page.sessions] == ["running-1", "ready-1", "idle-1"]
        idle = await orch.get_session("idle-1")
        assert idle.metrics.turns == 3
        assert idle.metrics.bytes == 120
        assert idle.last_run_status is RunStatus.COMPLETED
        messages = await orch.recent_messages("idle-1", limit=5)
        assert [m.content for m in messages.messages] == ["m1", "m0"]
        assert (await orch.store.runs.get("run-old")).output == "ok"
        assert (await orch.get_session("running-1")).state is SessionState.RUNNING
        counts = await orch.status_counts()
        assert counts == {"idle": 1, "ready": 1, "running": 1, "bytes": 170}
        assert [s.conversation_id for s in (await orch.list_sessions(10, query="ÜBER")).sessions]
        assert await orch.store.tombstones.is_dismissed("gone")
        assert [e.kind for e in await orch.history(5)] == ["session_dismissed"]
        # The migrated store works as a new one: a launch, a follow-up, a dismissal.
        handle = (await orch.delegate(prompt="hello"))[0]
        await handle.wait()
        follow = (await orch.delegate(prompt="again", conversation_id="idle-1"))[0]
        assert (await follow.wait()).status is RunStatus.COMPLETED
        await orch.dismiss("ready-1")
        assert (await orch.status_counts())["idle"] == 2
    finally:
        await orch.close()

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
    assert {"stderr", "owner_host_id", "owner_started", "agent_pid", "agent_started"} <= columns
    assert {"source_files", "import_reports", "session_counts"} <= _names(path, "table")
    assert {"sessions_in_flight", "sessions_fullest"} <= _names(path, "index")
    assert {"session_counts_insert", "session_counts_delete", "session_counts_update"} <= (
        _names(path, "trigger")
    )
    listed = run_cli("--data-dir", str(data_dir), "sessions", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert len(json_out(listed)["sessions"]) == 3


async def test_a_session_continued_before_the_state_existed_is_handed_off(tmp_path: Path) -> None:
    """Sessions continued before ``handed_off`` was set stayed idle: the upgrade marks
    them, and only them (a session whose successor is still its own is left as it was)."""
    data_dir = write_config(tmp_path / "data")
    path = db_path(data_dir)
    _build(path, 18)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET continued_in = 'ready-1' WHERE conversation_id = 'idle-1'")
        db.execute(
            "UPDATE sessions SET continued_in = 'idle-1' WHERE conversation_id = 'running-1'"
        )
    orch = await AgentOrchestrator.open(data_dir)
    try:
        assert (await orch.get_session("idle-1")).state is SessionState.HANDED_OFF
        assert (await orch.get_session("ready-1")).state is SessionState.READY
        assert (await orch.get_session("running-1")).state is SessionState.RUNNING
    finally:
        await orch.close()
