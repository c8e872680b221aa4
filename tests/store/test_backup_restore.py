"""``delegate store backup`` / ``restore``: copies that are whole, restores that never damage.

The holder is a store open in this process while the commands run as real
processes, as a ``watch`` or the panel holds the store while a person restores.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from support import BASE_US, finished, run_cli

from core.config import DB_FILENAME
from core.errors import StoreReplaced
from core.store import Store


def _count(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


def _integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return "; ".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))


async def _insert(store: Store, first: int, count: int) -> None:
    await store.bulk.insert(
        [finished(f"c{n}", BASE_US + n, messages=3) for n in range(first, first + count)]
    )


def _store(home: Path, *args: str) -> tuple[int, str]:
    result = run_cli("--data-dir", str(home / "data"), "store", *args, home=home)
    return result.returncode, result.stdout + result.stderr


async def test_backup_while_held_then_restore_into_the_held_store(tmp_path: Path) -> None:
    path = tmp_path / "data" / DB_FILENAME
    backup = tmp_path / "backup.sqlite3"
    holder = await Store.open(path)
    try:
        await _insert(holder, 0, 30)  # in the log, not yet in the file
        code, out = _store(tmp_path, "backup", str(backup))
        assert code == 0, out
        assert "30 sessions" in out
        assert _integrity(backup) == "ok"
        assert _count(backup) == 30
        assert not Path(f"{backup}-wal").exists()
        code, out = _store(tmp_path, "backup", str(backup))  # never over an existing file
        assert code == 1
        assert "invalid_request" in out
        assert "already exists" in out
        await _insert(holder, 30, 20)
        code, out = _store(tmp_path, "restore", str(backup))
        assert code == 0, out
        assert "into the open store" in out
        # The holder sees the restored store and goes on writing into it, no alarm.
        sessions, _ = await holder.sessions.page(100)
        assert len(sessions) == 30
        await _insert(holder, 100, 5)
    finally:
        await holder.close()
    assert _integrity(path) == "ok"
    assert _count(path) == 35


async def test_restore_after_a_replacement_puts_the_backup_in_and_the_store_opens(
    tmp_path: Path,
) -> None:
    path = tmp_path / "data" / DB_FILENAME
    backup = tmp_path / "backup.sqlite3"
    holder = await Store.open(path)
    try:
        await _insert(holder, 0, 30)
        code, out = _store(tmp_path, "backup", str(backup))
        assert code == 0, out
        await _insert(holder, 30, 30)
        shutil.copyfile(backup, path)  # what a person did before `store restore` existed
        with pytest.raises(StoreReplaced):
            await _insert(holder, 60, 1)
        code, out = _store(tmp_path, "restore", str(backup))  # the holder still runs
        assert code == 1, out
        assert "store_busy" in out
        assert "stop every delegate" in out
    finally:
        await holder.close()
    code, out = _store(tmp_path, "restore", str(backup))
    assert code == 0, out
    assert "in place of the file" in out
    reopened = await Store.open(path)
    try:
        await _insert(reopened, 200, 2)
    finally:
        await reopened.close()
    assert _integrity(path) == "ok"
    assert _count(path) == 32


@pytest.mark.parametrize("damage", ["garbage", "not delegate", "missing"])
async def test_a_bad_backup_is_refused_and_the_store_left_alone(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "data" / DB_FILENAME
    store = await Store.open(path)
    await _insert(store, 0, 5)
    await store.close()
    before = path.read_bytes()
    bad = tmp_path / "bad.sqlite3"
    if damage == "garbage":
        bad.write_bytes(b"SQLite format 3\0" + b"\xff" * 5000)
    elif damage == "not delegate":
        with contextlib.closing(sqlite3.connect(bad)) as conn:
            conn.execute("CREATE TABLE t (x)")
    code, out = _store(tmp_path, "restore", str(bad))
    assert code == 1
    assert ("store_error" in out) or ("invalid_request" in out), out
    assert "Traceback" not in out
    assert path.read_bytes() == before
