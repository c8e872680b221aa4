"""The SQLite store: file modes, schema version, WAL, and no side effects at import."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import BASE_US, finished, query

from core.config import DB_FILENAME
from core.errors import StoreError
from core.migrations import MIGRATIONS, SCHEMA_VERSION
from core.orchestrator import AgentOrchestrator
from core.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_data_dir_is_private_and_created_on_first_use(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh" / "delegate"
    assert not data_dir.exists()
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await (await orch.delegate(prompt="hello"))[0].wait()
        assert mode(data_dir) == 0o700
        db = data_dir / DB_FILENAME
        assert mode(db) == 0o600
        # SQLite's side files take the database file's mode.
        for side in (data_dir / f"{DB_FILENAME}-wal", data_dir / f"{DB_FILENAME}-shm"):
            if side.exists():
                assert mode(side) == 0o600, side
    finally:
        await orch.close()


async def test_db_file_is_private_even_with_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = await Store.open(tmp_path / "loose" / "store.sqlite3")
        await store.close()
    finally:
        os.umask(old)
    assert mode(tmp_path / "loose") == 0o700
    assert mode(tmp_path / "loose" / "store.sqlite3") == 0o600


def test_importing_creates_no_files(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    script = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        import core, tui
        names = []
        for package in (core, tui):
            for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                importlib.import_module(module.name)
                names.append(module.name)
        from core.config import resolve_data_dir
        from tui.cli import build_parser
        build_parser()
        resolve_data_dir(None)
        print(len(names))
        """
    )
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "DELEGATE_HOME": str(home / "delegate"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) >= 10  # the walk really imported the modules
    assert list(home.iterdir()) == []
    assert list(cwd.iterdir()) == []


async def test_schema_version_and_pragmas(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "s.sqlite3")
    await store.close()
    assert max(MIGRATIONS) == SCHEMA_VERSION
    with sqlite3.connect(tmp_path / "s.sqlite3") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"agents", "sessions", "messages", "runs", "history", "dismissed"} <= tables


async def test_foreign_keys_are_enforced(orch: AgentOrchestrator) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        async with orch.store.db.transaction() as db:
            await db.execute(
                "INSERT INTO runs(run_id, conversation_id, agent_id, kind, prompt, status,"
                " started_at) VALUES ('r', 'no-such-session', 'echo', 'launch', 'p', 'running', 0)"
            )


async def test_reopening_keeps_data_and_version(data_dir: Path) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    await orch.store.bulk.insert([finished("c1", BASE_US, messages=4)])
    await orch.close()
    again = await AgentOrchestrator.open(data_dir)
    try:
        assert (await again.get_session("c1")).metrics.messages == 4
        assert query(data_dir, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    finally:
        await again.close()


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError) as refused:
        await Store.open(path)
    assert refused.value.code == "store_error"
    assert "newer" in refused.value.message
    assert refused.value.to_payload()["error"]["code"] == "store_error"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION + 1,)
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


async def test_empty_existing_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite3"
    path.touch()
    store = await Store.open(path)
    try:
        assert await store.sessions.exists("x") is False
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_metrics_follow_the_stored_messages(orch: AgentOrchestrator, data_dir: Path) -> None:
    prompt = "naïve café — ünïcode 数据"
    handle = (await orch.delegate(prompt=prompt))[0]
    await handle.wait()
    session = await orch.get_session(handle.conversation_id)
    rows = query(
        data_dir,
        "SELECT content, token_count, tool FROM messages WHERE conversation_id = ?",
        [handle.conversation_id],
    )
    assert session.metrics.messages == len(rows) == 2
    assert session.metrics.turns == 1
    assert session.metrics.tokens == sum(r[1] for r in rows)
    assert all(r[1] > 0 for r in rows)  # counted once, at insert
    assert session.metrics.bytes == sum(
        len(r[0].encode()) + len((json.dumps(json.loads(r[2])) if r[2] else "").encode())
        for r in rows
    )
    assert session.context.used_tokens == session.metrics.tokens
    assert session.context.limit_tokens == orch.settings.agents["echo"].context_limit
