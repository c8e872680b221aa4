"""Capsules for tests: a valid one to vary, a real git repository, saving where
``latest`` finds it."""

from __future__ import annotations

import subprocess
from pathlib import Path

BRANCH = "feature/capsules"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def capsule_text(*, references: str = "", knowledge: str = "- `src/app.py` prints v1.") -> str:
    return f"""---
branch: {BRANCH}
source_session: 20261123-abc
created_at: 2026-11-23T21:00:00Z
primary_objective: "Teach the app to print v2"
token_budget: 1200
version: 0.1
{references}---
# Mission Snapshot
- **User intent:** the app prints v2.
- **Current status:** v1 still printed; WIDGET-MARKER-7 names this capsule.

# Key Decisions & Rationale
1. Keep one print call (simplest).

# Active Workstreams
- printing → src/app.py, no blockers.

# Pending Actions
- [ ] Change the literal (next agent).

# Knowledge Base
{knowledge}

# Risks & Watchpoints
- None known.

# Transcript Highlights
- 2026-11-23T20:55:00Z: the user asked for v2 (message 4).

# Exploratory Threads & User Preferences
- The user prefers short commits.
"""


def make_repo(where: Path) -> Path:
    """A git repository on ``BRANCH`` with ``src/app.py`` committed."""
    root = where / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", BRANCH)
    (root / "src" / "app.py").write_text("print('v1')\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def save(repo: Path, text: str, stamp: str = "20261123T210000Z") -> Path:
    folder = repo / ".delegate" / "capsules" / BRANCH
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}.md"
    path.write_text(text, encoding="utf-8")
    return path


def body_of(text: str) -> str:
    return text.split("---\n", 2)[2]
