"""Fixtures of the importer tests: the real transcripts, copied where tests may write."""

from __future__ import annotations

from pathlib import Path

import pytest
from source_homes import REALDATA, Homes, copy_tree


@pytest.fixture
def realdata(tmp_path: Path) -> Homes:
    """Every real transcript (claude/ mirrors ~/.claude, codex/ mirrors ~/.codex)."""
    homes = Homes(tmp_path / "home" / ".claude", tmp_path / "home" / ".codex")
    copy_tree(REALDATA / "claude", homes.claude)
    copy_tree(REALDATA / "codex", homes.codex)
    return homes


@pytest.fixture
def empty_homes(tmp_path: Path) -> Homes:
    homes = Homes(tmp_path / "home" / ".claude", tmp_path / "home" / ".codex")
    (homes.projects / "-work-app").mkdir(parents=True)
    (homes.codex / "sessions").mkdir(parents=True)
    return homes
