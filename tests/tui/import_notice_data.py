"""Transcripts on disk for the panel's import tests: a project with one session, and
a newer session whose transcript holds a record type of a later Claude Code release
and one damaged line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIRST_ID = "5e55a0a0-1111-4222-8333-944445555001"
NEW_ID = "5e55a0a0-1111-4222-8333-944445555002"
PROJECT = "-tmp-importing-app"


def _user(session: str, text: str, ts: str) -> dict[str, Any]:
    return {
        "sessionId": session,
        "cwd": "/tmp/importing-app",
        "version": "2.1.328",
        "type": "user",
        "uuid": f"{session[-3:]}-u1",
        "timestamp": ts,
        "message": {"role": "user", "content": text},
    }


def claude_home(tmp_path: Path) -> Path:
    """A Claude Code folder with one session (the codex folder beside it is empty)."""
    claude = tmp_path / "claude"
    project = claude / "projects" / PROJECT
    project.mkdir(parents=True)
    first = _user(FIRST_ID, "tidy the release notes", "2026-11-21T19:00:00.000Z")
    (project / f"{FIRST_ID}.jsonl").write_text(json.dumps(first) + "\n")
    (tmp_path / "codex").mkdir()
    return claude


def add_session_with_surprises(claude: Path) -> None:
    """A new session: three records of a type from a later release, one broken line."""
    later = {"type": "hologram", "version": "2.1.400", "sessionId": NEW_ID}
    lines = [
        json.dumps(_user(NEW_ID, "port the build to the new runner", "2026-11-21T20:00:00.000Z")),
        *(json.dumps(later) for _ in range(3)),
        '{"type": "assistant", "message": {cut off',
    ]
    (claude / "projects" / PROJECT / f"{NEW_ID}.jsonl").write_text("\n".join(lines) + "\n")
