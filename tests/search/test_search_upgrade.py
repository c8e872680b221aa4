"""A store from before search (schema 5) gains an index of what it already holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from support import db_path, write_config

from core.migrations import MIGRATIONS
from core.orchestrator import AgentOrchestrator
from core.store.database import _split_sql

US = 1_700_000_000_000_000


def _store_before_search(path: Path) -> None:
    with sqlite3.connect(path) as db:
        for target in range(1, 6):
            for statement in _split_sql(MIGRATIONS[target]):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {target}")
        db.execute(
            "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, title,"
            " created_at, last_interacted_at) VALUES ('old-1', 'echo', 'standard', 'idle',"
            " '/tmp/p', 'Überprüfung der Zahlen', ?, ?)",
            (US, US + 10),
        )
        for seq, role, text in [
            (0, "user", "count the marsupials"),
            (1, "assistant", "there are seven wallabies"),
            (2, "tool", "wombat output of a tool"),
        ]:
            db.execute(
                "INSERT INTO messages VALUES ('old-1', ?, ?, ?, ?, ?, 4, NULL, NULL)",
                (seq, f"old-1/m{seq}", role, text, US + seq),
            )
        db.execute(
            "INSERT INTO source_files(path, source, size, mtime_ns, read_offset, parse_state,"
            " scanned_at) VALUES ('/x.jsonl', 'claude-code', 10, 1, 10, '{\"turns\": 1}', ?)",
            (US,),
        )


async def test_titles_and_messages_are_indexed_and_transcripts_read_again(
    tmp_path: Path,
) -> None:
    data_dir = write_config(tmp_path / "data")
    _store_before_search(db_path(data_dir))

    orch = await AgentOrchestrator.open(data_dir)
    try:
        for text in ("uberprufung", "marsupials", '"seven wallabies"'):
            page = await orch.search_sessions(text)
            assert [r.session.conversation_id for r in page.results] == ["old-1"], text
        assert (await orch.search_sessions("wombat")).results == []  # tool output
    finally:
        await orch.close()
    with sqlite3.connect(db_path(data_dir)) as db:
        # The next import reads every transcript from the start, indexing its text.
        assert db.execute("SELECT size, parse_state FROM source_files").fetchall() == [(-1, "{}")]


def _store_at(path: Path, version: int) -> None:
    with sqlite3.connect(path) as db:
        for target in range(1, version + 1):
            for statement in _split_sql(MIGRATIONS[target]):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {target}")


async def test_names_given_before_the_parts_migration_are_found_after_it(
    tmp_path: Path,
) -> None:
    data_dir = write_config(tmp_path / "data")
    path = db_path(data_dir)
    _store_at(path, 8)  # names exist, texts are one row per message
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, title, name,"
            " source, created_at, last_interacted_at) VALUES ('imp-1', 'claude-code',"
            " 'standard', 'idle', '/tmp/p', 'first prompt', 'Quokka migration',"
            " 'claude-code', ?, ?)",
            (US, US + 10),
        )
        db.execute(
            "INSERT INTO search_docs (conversation_id, origin, kind, at, body)"
            " VALUES ('imp-1', 77, 'user', ?, 'an imported marsupial prompt')",
            (US,),
        )
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")

    orch = await AgentOrchestrator.open(data_dir)
    try:
        named = await orch.search_sessions("quokka")
        old_row = await orch.search_sessions("marsupial")
    finally:
        await orch.close()

    assert [r.session.conversation_id for r in named.results] == ["imp-1"]
    assert old_row.results == []  # dropped: the next import reads it again, in parts
