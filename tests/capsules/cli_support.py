"""Shared by the capsule command-line tests: a repository, a capsule, scripted agents."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from support import json_out, run_cli, write_config

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}
BRANCH = "feature/auth"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(root: Path) -> Path:
    """A repository on ``feature/auth`` with one commit."""
    repo = root / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", BRANCH)
    (repo / "auth.py").write_text("def login():\n    return True\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    return repo


def capsule_text(session: str = "s-1", *, extra: str = "") -> str:
    """A capsule every check passes (its references: none)."""
    return f"""---
branch: {BRANCH}
source_session: {session}
created_at: 2026-11-23T21:00:00Z
primary_objective: "Ship the login flow"
token_budget: 1200
version: 0.1
---
# Mission Snapshot
- **User intent:** people log in with a password.
- **Current status:** login works; logout is next.

# Key Decisions & Rationale
1. Sessions in a signed cookie: no server-side store to run.

# Active Workstreams
- Auth endpoints: login done, logout pending.

# Pending Actions
- [ ] Write the logout endpoint (next session).

# Knowledge Base
- `auth.py` holds `login()`.

# Risks & Watchpoints
- Cookie signing key rotation is not designed yet.

# Transcript Highlights
- 2026-11-23T20:40:00Z: the user chose cookies over a session table.

# Exploratory Threads & User Preferences
- The user prefers small commits.{extra}
"""


def capsule_config(data: Path, reply: str) -> Path:
    """``capsuler`` answers a capsule prompt with ``reply``; ``mute`` answers it without one;
    ``held`` never finishes answering it (its gate never opens)."""
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    script = data / "capsuler.toml"
    script.write_text(
        f"""
[[rules]]
match = "(?i)capsule"
reply = '''{reply}'''
[[rules]]
match = "."
reply = "working on: {{prompt}}"
""",
        encoding="utf-8",
    )
    held = data / "held.toml"
    held.write_text(
        f"""
[[rules]]
match = "(?i)capsule"
reply = "thinking about it"
gate = "{data / "never"}"
[[rules]]
match = "."
reply = "ok"
""",
        encoding="utf-8",
    )
    mute = data / "mute.toml"
    mute.write_text(
        """
[[rules]]
match = "(?i)capsule"
reply = "I would rather not."
[[rules]]
match = "."
reply = "ok"
""",
        encoding="utf-8",
    )
    return write_config(
        data,
        f"""
[agents.capsuler]
runner = "scripted"
script = "{script}"

[agents.mute]
runner = "scripted"
script = "{mute}"

[agents.held]
runner = "scripted"
script = "{held}"
""",
    )


def cli(home: Path, data: Path, *args: str, cwd: Path | None = None, code: int = 0) -> Any:
    """Run ``delegate --data-dir DATA ARGS --json`` and its parsed answer (exit ``code``)."""
    result = run_cli("--data-dir", str(data), *args, home=cwd or home)
    assert result.returncode == code, result.stderr + result.stdout
    return json_out(result)
