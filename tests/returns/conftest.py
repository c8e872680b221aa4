"""Fixtures the compact-returns tests share: an open store and an empty repository folder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.config import DB_FILENAME
from core.store import Store


@pytest.fixture
async def store(data_dir: Path) -> AsyncIterator[Store]:
    opened = await Store.open(data_dir / DB_FILENAME)
    yield opened
    await opened.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder
