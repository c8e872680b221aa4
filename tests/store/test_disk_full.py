"""A full disk under the store: one typed ``disk_full`` naming the folder, nothing
half-written, and the same write works once there is room again.

Two ways to fill it: SQLite's own page limit (``PRAGMA max_page_count``, the same
``SQLITE_FULL`` a full file system gives, on any machine) and a real size-limited
tmpfs (root only; skipped with the reason otherwise).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from full_disk import SmallDisk, small_disk
from support import BASE_US, finished

from core.errors import DiskFull
from core.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "store.sqlite3")
    yield opened
    await opened.close()


async def _cap_pages(store: Store, extra: int) -> None:
    """Let the store's file grow by at most ``extra`` pages (0: not at all)."""
    async with store.db.transaction() as db:
        rows = await db.execute_fetchall("PRAGMA page_count")
        pages = int(next(iter(rows))[0])
        await db.execute(f"PRAGMA max_page_count = {pages + extra}")


def _many(prefix: str, n: int = 60) -> list:  # type: ignore[type-arg]
    return [finished(f"{prefix}{i}", BASE_US + i, messages=40) for i in range(n)]


async def _ids(store: Store) -> set[str]:
    sessions, _ = await store.sessions.page(1000)
    return {s.conversation_id for s in sessions}


async def _open_and_close(path: Path) -> None:
    opened = await Store.open(path)
    await opened.close()


def _integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


@pytest.mark.parametrize("extra_pages", [0, 1, 4])
async def test_a_store_that_cannot_grow_is_disk_full_and_writes_nothing(
    store: Store, tmp_path: Path, extra_pages: int
) -> None:
    await store.bulk.insert([finished("kept", BASE_US)])
    await _cap_pages(store, extra_pages)

    with pytest.raises(DiskFull) as raised:
        await store.bulk.insert(_many("lost"))

    assert raised.value.code == "disk_full"
    assert str(tmp_path) in raised.value.message
    assert "free space in" in raised.value.message
    assert "nothing was written" in raised.value.message
    assert raised.value.to_payload()["error"]["folder"] == str(tmp_path)  # type: ignore[index]
    assert await _ids(store) == {"kept"}  # all or nothing
    assert store.db._writer is not None
    assert not store.db._writer.in_transaction

    await _cap_pages(store, 100_000)  # room again: the same write works
    await store.bulk.insert(_many("lost"))
    assert len(await _ids(store)) == 61
    assert _integrity(store.db.path) == "ok"


@pytest.fixture
def disk(tmp_path: Path) -> AsyncIterator[SmallDisk]:
    with small_disk(tmp_path / "mnt") as mounted:
        if isinstance(mounted, str):
            pytest.skip(mounted)
        yield mounted


async def test_a_full_file_system_under_an_open_store_is_disk_full_then_recovers(
    disk: SmallDisk,
) -> None:
    """The reported case: every write said ``cannot rollback - no transaction is active``."""
    store = await Store.open(disk.root / "data" / "store.sqlite3")
    try:
        await store.bulk.insert([finished("kept", BASE_US)])
        for leave in (0, 8192, 65536):
            disk.fill(leave)
            with pytest.raises(DiskFull) as raised:  # noqa: PT012 - fills what was left, then refuses
                for round_ in range(40):
                    await store.bulk.insert(_many(f"r{leave}-{round_}-"))
            assert str(disk.root / "data") in raised.value.message
            assert store.db._writer is not None
            assert not store.db._writer.in_transaction
            disk.free()
            await store.bulk.insert([finished(f"after-{leave}", BASE_US)])
            assert f"after-{leave}" in await _ids(store)
    finally:
        await store.close()
    assert _integrity(disk.root / "data" / "store.sqlite3") == "ok"


async def test_a_store_opened_on_a_full_file_system_is_disk_full(disk: SmallDisk) -> None:
    """Full before the start: SQLite cannot make its -shm and says only "disk I/O error"."""
    path = disk.root / "data" / "store.sqlite3"
    store = await Store.open(path)
    await store.bulk.insert([finished("kept", BASE_US)])
    await store.close()
    for extra in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{extra}")
    disk.fill()
    with pytest.raises(DiskFull) as raised:
        await _open_and_close(path)
    assert str(path.parent) in raised.value.message
    disk.free()
    store = await Store.open(path)
    try:
        assert await _ids(store) == {"kept"}
    finally:
        await store.close()


async def test_a_store_that_cannot_be_created_on_a_full_file_system_is_disk_full(
    disk: SmallDisk,
) -> None:
    (disk.root / "data").mkdir()
    disk.fill()
    with pytest.raises(DiskFull):
        await _open_and_close(disk.root / "data" / "store.sqlite3")
    disk.free()
    store = await Store.open(disk.root / "data" / "store.sqlite3")
    await store.close()
