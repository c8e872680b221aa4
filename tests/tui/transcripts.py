"""Claude Code transcripts written for TUI tests (real shapes, made-up content), and imported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.orchestrator import AgentOrchestrator

PROJECT = "-work-app"
UNKNOWN = "aaaaaaaa-0000-4000-8000-000000000001"  # no usage recorded
COMPACTED = "aaaaaaaa-0000-4000-8000-000000000002"  # compacted, nothing measured since
MEASURED = "aaaaaaaa-0000-4000-8000-000000000003"


def envelope(session: str, kind: str, n: int, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/app",
        "sessionId": session,
        "version": "2.1.42",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"{session[:8]}-{n:06d}",
        "timestamp": f"2026-11-21T20:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        **extra,
    }


def user(session: str, n: int, content: Any, **extra: Any) -> dict[str, Any]:
    return envelope(session, "user", n, message={"role": "user", "content": content}, **extra)


def assistant(session: str, n: int, blocks: list[dict[str, Any]], used: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": f"msg-{session[:8]}-{n}",
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "type": "message",
        "content": blocks,
    }
    if used:
        message["usage"] = {
            "input_tokens": used,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
        }
    return envelope(session, "assistant", n, message=message)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def compaction(session: str, n: int, summary: str) -> list[dict[str, Any]]:
    boundary = envelope(
        session,
        "system",
        n,
        subtype="compact_boundary",
        compactMetadata={"trigger": "auto", "preTokens": 150_000},
    )
    return [boundary, user(session, n + 1, summary, isCompactSummary=True)]


def write(claude_dir: Path, session: str, lines: list[dict[str, Any]]) -> Path:
    path = claude_dir / "projects" / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    return path


def meter_homes(claude_dir: Path) -> None:
    """Three sessions whose meters differ: usage unknown, an estimate, a measured figure."""
    write(claude_dir, UNKNOWN, [user(UNKNOWN, 1, "a session with no usage recorded")])
    write(
        claude_dir,
        COMPACTED,
        [
            user(COMPACTED, 1, "a long session that was compacted"),
            assistant(COMPACTED, 2, [text("working on it")], used=150_000),
            *compaction(COMPACTED, 3, "What happened so far. " * 500),
        ],
    )
    write(
        claude_dir,
        MEASURED,
        [
            user(MEASURED, 1, "a session with its usage"),
            assistant(MEASURED, 2, [text("done")], used=42_000),
        ],
    )


async def import_into(data_dir: Path, claude_dir: Path) -> None:
    """Import ``claude_dir`` into the store of ``data_dir`` before an app opens it."""
    codex = claude_dir.parent / "codex-empty"
    codex.mkdir(exist_ok=True)
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.import_sources(claude_dir, codex)
    finally:
        await orch.close()
