"""Fixtures of the TUI tests: snapshot folder, determinism, demo data, the app factory.

Snapshots must look the same on every machine and every run, so:
- every "3m ago" is measured against ``FIXED_NOW`` (demo data is anchored there too);
- ids the orchestrator mints come from a counter instead of ``uuid4``;
- the launch form defaults to ``/tmp`` (never the real cwd) and launches run there;
- cursors do not blink (``create_app(cursor_blink=False)``);
- no live supervisor runs unless the test passes one (``supervise=Supervision(...)``);
- SVG snapshots land in the top-level ``snapshots/<test module>/`` folder.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot
from tui_support import (
    DEMO_SESSIONS,
    FIXED_NOW_US,
    LAUNCH_CWD,
    AppFactory,
    fixed_clock,
    write_config,
)

from core import demo
from core.config import DB_FILENAME
from core.store import Store
from core.tokens import count_tokens
from tui.app import DelegateApp, create_app

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT_ROOT = REPO / "snapshots"


class TopLevelSnapshots(pytest_textual_snapshot.SVGImageExtension):
    """Each SVG under ``<repo>/snapshots/<test module name>/`` (not beside the tests)."""

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOT_ROOT / Path(test_location.filepath).stem)


# The snap_compare fixture looks this name up when it is called.
pytest_textual_snapshot.SVGImageExtension = TopLevelSnapshots  # type: ignore[misc]


# --- determinism -------------------------------------------------------------


def counted_ids() -> Callable[[], str]:
    """Ids for the orchestrator to mint (conversations, runs, messages), counting up.

    The count leads, so short ids (the first 8 digits) differ: ``00000001-7e57-...``.
    """
    counter = itertools.count(1)

    def new_id() -> str:
        n = next(counter)
        return str(uuid.UUID(f"{n:08x}-7e57-4000-8000-{n:012x}"))

    return new_id


# --- data folders ------------------------------------------------------------


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the 200 demo sessions, built once and copied per test."""
    folder = tmp_path_factory.mktemp("demo-template")

    async def fill() -> None:
        store = await Store.open(folder / DB_FILENAME)
        try:
            await demo.fill(store, DEMO_SESSIONS, FIXED_NOW_US, count_tokens)
        finally:
            await store.close()

    asyncio.run(fill())
    return folder


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh data folder (no store yet) with the test agents configured."""
    return write_config(tmp_path / "data")


@pytest.fixture
def demo_dir(tmp_path: Path, demo_template: Path) -> Path:
    """A data folder holding the 200 demo sessions, with the test agents configured."""
    folder = tmp_path / "demo"
    shutil.copytree(demo_template, folder)
    return write_config(folder)


# --- the app -----------------------------------------------------------------


@pytest.fixture
def make_app() -> AppFactory:
    """``make_app(data_dir, **kwargs)``: the real app on the fixed clock, launching in /tmp,
    with counted ids and steady cursors; ``kwargs`` go to ``create_app``."""

    def make(folder: Path, **kwargs: Any) -> DelegateApp:
        options: dict[str, Any] = {
            "clock": fixed_clock,
            "launch_cwd": LAUNCH_CWD,
            "new_id": counted_ids(),
            "cursor_blink": False,  # a blink tick must never decide what a snapshot shows
            # No live supervisor unless a test asks for one (``supervise=Supervision(...)``):
            # a change it reports must never decide what a snapshot shows either.
            "supervise": None,
        }
        return create_app(folder, **(options | kwargs))

    return make
