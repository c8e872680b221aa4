"""Fixtures of the search tests: the real transcripts, copied where tests may write."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    """``(claude_dir, codex_dir)``: every real transcript, writable."""
    claude, codex = tmp_path / "home" / ".claude", tmp_path / "home" / ".codex"
    for src, dst in ((REALDATA / "claude", claude), (REALDATA / "codex", codex)):
        shutil.copytree(src, dst)
        for path in [dst, *dst.rglob("*")]:  # the shared originals are read-only
            path.chmod(0o755 if path.is_dir() else 0o644)
    return claude, codex
