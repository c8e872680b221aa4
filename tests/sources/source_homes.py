"""The importer tests' homes: the real transcripts, copied where tests may write."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

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


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst)
    for path in [dst, *dst.rglob("*")]:  # the shared originals are read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
