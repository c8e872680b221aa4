"""Every wait on the store has an end: past it, ``store_busy`` says what held it."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import time
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.errors import StoreBusy
from core.importing.importer import IMPORT_LOCK_FILENAME, import_lock
from core.store import Store
from core.store.database import BUSY_TIMEOUT_MS


async def test_a_write_lock_held_by_another_process_ends_in_store_busy(tmp_path: Path) -> None:
    path = tmp_path / "delegate.sqlite3"
    store = await Store.open(path)
    try:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # another process's writer, holding on
            started = time.monotonic()
            with pytest.raises(StoreBusy, match="busy") as caught:
                await store.bulk.insert([finished("c1", BASE_US)])
            assert caught.value.code == "store_busy"
            assert time.monotonic() - started < BUSY_TIMEOUT_MS / 1000 + 5
            other.execute("ROLLBACK")
        await store.bulk.insert([finished("c1", BASE_US)])  # free again: it works
    finally:
        await store.close()


async def test_the_import_lock_is_waited_for_within_a_bound_and_names_its_holder(
    tmp_path: Path,
) -> None:
    async with import_lock(tmp_path):
        pass  # the holder's pid is written when it is taken
    fd = os.open(tmp_path / IMPORT_LOCK_FILENAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another import holds it and does not let go
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"4242", 0)
        async with asyncio.timeout(10):
            with pytest.raises(StoreBusy, match=r"another import \(process 4242\)"):
                async with import_lock(tmp_path, wait_s=0.5):
                    pytest.fail("taken while held")
    finally:
        os.close(fd)
    async with asyncio.timeout(10), import_lock(tmp_path, wait_s=0.5):
        pass  # released: taken at once
