"""Fixtures of the importer tests: the real transcripts, copied where tests may write."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"


@dataclass(frozen=True)
class Homes:
    """A ``~/.claude`` and a ``~/.codex`` under tmp_path."""

    claude: Path
    codex: Path

    @property
    def projects(self) -> Path:
        return self.claude / "projects"

    def claude_file(self, project: str, name: str) -> Path:
        return self.projects / project / name

    def codex_file(self, session_id: str) -> Path:
        return next((self.codex / "sessions").rglob(f"rollout-*-{session_id}.jsonl"))


def _copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)
    for path in [dst, *dst.rglob("*")]:  # the shared originals are read-only
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def realdata(tmp_path: Path) -> Homes:
    """Every real transcript (claude/ mirrors ~/.claude, codex/ mirrors ~/.codex)."""
    homes = Homes(tmp_path / "home" / ".claude", tmp_path / "home" / ".codex")
    _copy(REALDATA / "claude", homes.claude)
    _copy(REALDATA / "codex", homes.codex)
    return homes


@pytest.fixture
def empty_homes(tmp_path: Path) -> Homes:
    homes = Homes(tmp_path / "home" / ".claude", tmp_path / "home" / ".codex")
    (homes.projects / "-work-app").mkdir(parents=True)
    (homes.codex / "sessions").mkdir(parents=True)
    return homes
