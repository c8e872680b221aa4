"""A store file replaced or removed under an open store is noticed, never written to.

A backup copied (``cp``: same inode) or moved (``mv``: a new inode) over the file
while a process holds it would be read with the old write-ahead log by every
later process: silently damaged. The holder refuses to write (``store_replaced``),
a later open refuses too, and the file stays exactly the backup.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.errors import StoreRemoved, StoreReplaced
from core.store import Store


def _integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return "; ".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check"))


async def _insert(store: Store, first: int, count: int) -> None:
    await store.bulk.insert(
        [finished(f"c{n}", BASE_US + n, messages=4) for n in range(first, first + count)]
    )


async def _backup_then_more(path: Path, backup: Path) -> Store:
    """A holder that wrote, a backup of its file, then more writes in its log."""
    holder = await Store.open(path)
    await _insert(holder, 0, 40)
    async with holder.db.transaction() as db:
        await db.execute("PRAGMA user_version")  # a commit: the file is as it is now
    with (
        contextlib.closing(sqlite3.connect(path)) as conn,
        contextlib.closing(sqlite3.connect(backup)) as dst,
    ):
        conn.backup(dst)
    await _insert(holder, 40, 60)
    return holder


@pytest.mark.parametrize("how", ["cp", "mv"])
async def test_a_backup_put_over_a_held_store_is_refused_not_written(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "delegate.sqlite3"
    backup = tmp_path / "backup.sqlite3"
    holder = await _backup_then_more(path, backup)
    try:
        if how == "cp":
            shutil.copyfile(backup, path)  # cp: the same inode, rewritten
        else:
            shutil.copyfile(backup, tmp_path / "moving")
            os.replace(tmp_path / "moving", path)  # mv: a new inode
        wanted = path.read_bytes()
        with pytest.raises(StoreReplaced, match=r"replaced.*delegate store restore"):
            await _insert(holder, 100, 5)
        with pytest.raises(StoreReplaced):  # and it keeps refusing
            await _insert(holder, 105, 5)
        # A process that opens now would read the backup with the old log: refused.
        with pytest.raises(StoreReplaced, match="replaced"):
            await Store.open(path)
    finally:
        await holder.close()
    assert path.read_bytes() == wanted, "the replaced file was written to"
    assert _integrity(path) == "ok"
    with pytest.raises(StoreReplaced):  # still refused after the holder is gone
        await Store.open(path)


async def test_a_store_removed_under_a_holder_stops_its_writes_and_starts_fresh(
    tmp_path: Path,
) -> None:
    path = tmp_path / "delegate.sqlite3"
    holder = await Store.open(path)
    try:
        await _insert(holder, 0, 40)
        path.unlink()
        with pytest.raises(StoreRemoved, match="removed"):
            await _insert(holder, 40, 5)
        # The next start makes a fresh store, not one read with the old log.
        fresh = await Store.open(path)
        try:
            sessions, _ = await fresh.sessions.page(10)
            assert sessions == []
            await _insert(fresh, 200, 3)
            sessions, _ = await fresh.sessions.page(10)
            assert len(sessions) == 3
        finally:
            await fresh.close()
        with pytest.raises(StoreRemoved):
            await _insert(holder, 45, 5)
    finally:
        await holder.close()
    assert _integrity(path) == "ok"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 3


async def test_writes_of_other_processes_and_checkpoints_are_not_a_replacement(
    tmp_path: Path,
) -> None:
    """Two stores on one file, each checkpointing the other's log: never a false alarm."""
    path = tmp_path / "delegate.sqlite3"
    first = await Store.open(path)
    second = await Store.open(path)
    try:
        for round_no in range(30):
            await _insert(first, round_no * 20, 10)
            await _insert(second, round_no * 20 + 10, 10)
            if round_no % 5 == 0:
                async with first.db.transaction():
                    pass
                with contextlib.closing(sqlite3.connect(path)) as conn:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await first.close()
        await second.close()
    reopened = await Store.open(path)
    await reopened.close()
    assert _integrity(path) == "ok"


async def test_a_data_folder_copied_elsewhere_with_its_log_is_another_store(
    tmp_path: Path,
) -> None:
    """Not a replacement: the copy is at another path (its log came with it)."""
    path = tmp_path / "one" / "delegate.sqlite3"
    holder = await Store.open(path)
    try:
        await _insert(holder, 0, 40)  # frames in the log
        shutil.copytree(path.parent, tmp_path / "two")
    finally:
        await holder.close()
    copy = await Store.open(tmp_path / "two" / "delegate.sqlite3")
    try:
        await _insert(copy, 100, 2)
    finally:
        await copy.close()
    assert _integrity(tmp_path / "two" / "delegate.sqlite3") == "ok"


async def test_a_fresh_store_made_after_a_removal_is_not_taken_for_a_replacement(
    tmp_path: Path,
) -> None:
    """The holder notices only once another process has made the fresh store."""
    path = tmp_path / "delegate.sqlite3"
    holder = await Store.open(path)
    try:
        await _insert(holder, 0, 40)
        path.unlink()
        fresh = await Store.open(path)  # the next start, before the holder writes again
        await _insert(fresh, 200, 3)
        await fresh.close()
        with pytest.raises(StoreRemoved):
            await _insert(holder, 40, 5)
    finally:
        await holder.close()
    again = await Store.open(path)  # not refused as replaced
    try:
        sessions, _ = await again.sessions.page(10)
        assert len(sessions) == 3
    finally:
        await again.close()
