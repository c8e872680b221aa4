"""The panel on a full disk: a write it makes (a rename) is a notice naming the folder,
never a crash or an error modal; once there is room the same write works.

The data folder is on a small tmpfs the test fills (root only; skipped with the
reason otherwise).
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from full_disk import SmallDisk, small_disk
from tui_support import (
    AppFactory,
    notifications,
    picker,
    settle,
    started,
    type_text,
    wait_until,
)

from core.config import DB_FILENAME
from core.demo import demo_id
from tui.modals.error import ErrorModal


def stored_name(data_dir: Path, conversation_id: str) -> str | None:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT name FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return None if row is None else row[0]


@pytest.fixture
def full_dir(demo_dir: Path, tmp_path: Path) -> Iterator[tuple[Path, SmallDisk]]:
    """The demo data folder, on a small disk of its own."""
    with small_disk(tmp_path / "mnt", "32m") as disk:
        if isinstance(disk, str):
            pytest.skip(disk)
        shutil.copytree(demo_dir, disk.root / "demo")
        yield disk.root / "demo", disk


async def test_a_rename_on_a_full_disk_is_a_notice_and_works_once_there_is_room(
    full_dir: tuple[Path, SmallDisk], make_app: AppFactory
) -> None:
    demo_dir, disk = full_dir
    app = make_app(demo_dir)
    long_name = "A name long enough to need a new page " * 5  # 195 characters
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        disk.fill()

        await pilot.press("ctrl+r")
        await settle(pilot)
        await type_text(pilot, long_name)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("Rename failed" in n for n in notifications(app)),
            what="the rename's notice",
        )
        notice = next(n for n in notifications(app) if "Rename failed" in n)
        assert f"free space in {demo_dir}" in notice
        assert "nothing was written" in notice
        assert not isinstance(app.screen, ErrorModal)
        assert picker(app).is_current
        assert stored_name(demo_dir, demo_id(0)) is None

        disk.free()  # room again
        await pilot.press("ctrl+r")
        await settle(pilot)
        await type_text(pilot, long_name)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: stored_name(demo_dir, demo_id(0)) == long_name.strip(),
            what="the name stored once there is room",
        )
