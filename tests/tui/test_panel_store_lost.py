"""The panel whose store file is replaced or removed under it says so at once, without
waiting for a write of its own to be refused."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from tui_support import AppFactory, notifications, started, wait_until

from core.config import DB_FILENAME


def backup_of(data_dir: Path, into: Path) -> Path:
    """A good copy of the store (SQLite's backup API), as a person would keep one."""
    with sqlite3.connect(data_dir / DB_FILENAME) as source, sqlite3.connect(into) as copy:
        source.backup(copy)
    return into


async def test_a_store_copied_over_while_the_panel_runs_is_said_at_once(
    demo_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    backup = backup_of(demo_dir, tmp_path / "backup.sqlite3")
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        shutil.copyfile(backup, demo_dir / DB_FILENAME)  # `cp backup store` under the panel
        await wait_until(
            pilot,
            lambda: any("store_replaced" in n for n in notifications(app)),
            what="the notice that the store was replaced",
            seconds=15,
        )
        notice = next(n for n in notifications(app) if "store_replaced" in n)
        assert str(demo_dir / DB_FILENAME) in notice
        assert "delegate store restore" in notice


async def test_a_store_removed_while_the_panel_runs_is_said_once(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        (demo_dir / DB_FILENAME).unlink()
        await wait_until(
            pilot,
            lambda: any("store_removed" in n for n in notifications(app)),
            what="the notice that the store was removed",
            seconds=15,
        )
        await pilot.pause(2.5)  # more looks at the file: still one notice
        assert sum("store_removed" in n for n in notifications(app)) == 1
