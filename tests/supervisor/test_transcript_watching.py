"""Transcripts the agents append to, watched on disk: real files, real file events."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from supervisor_support import (
    CLAUDE_PROJECT,
    CLAUDE_SESSION,
    REALDATA,
    assistant_line,
    copy_tree,
    recording,
)

from core.events import SessionsChanged, WatchStatus
from core.orchestrator import AgentOrchestrator
from core.supervisor import Supervisor

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "debounce_ms": 100}


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    """A ``~/.claude`` and ``~/.codex`` holding copies of the real transcripts."""
    home = tmp_path / "home"
    return (
        copy_tree(REALDATA / "claude", home / ".claude"),
        copy_tree(REALDATA / "codex", home / ".codex"),
    )


async def context_tokens(orch: AgentOrchestrator, conversation_id: str) -> int:
    return (await orch.get_session(conversation_id)).context.used_tokens


async def test_an_appended_claude_transcript_moves_its_session(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, codex = homes
    await orch.import_sources(claude, codex, workers=0)
    before = await context_tokens(orch, CLAUDE_SESSION)
    transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
    with recording(orch.bus) as seen:
        async with Supervisor(orch, claude_dir=claude, codex_dir=codex, **FAST) as supervisor:
            assert supervisor.watch_status.transcripts == "watching"
            with transcript.open("a", encoding="utf-8") as f:
                f.write(assistant_line(CLAUDE_SESSION, before + 12_345, 1) + "\n")
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and CLAUDE_SESSION in e.conversation_ids
            )
    assert await context_tokens(orch, CLAUDE_SESSION) == before + 12_345


async def test_a_new_codex_session_file_is_picked_up(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, codex = homes
    original = next((codex / "sessions").rglob("rollout-*.jsonl"))
    new_id = "019e0000-0000-7000-8000-000000000001"
    text = original.read_text(encoding="utf-8")
    old_id = original.stem[-36:]
    with recording(orch.bus) as seen:
        async with Supervisor(orch, claude_dir=claude, codex_dir=codex, **FAST):
            day = codex / "sessions" / "2026" / "06" / "01"
            day.mkdir(parents=True)  # a new dated folder, as Codex makes each day
            (day / f"rollout-2026-06-01T10-00-00-{new_id}.jsonl").write_text(
                text.replace(old_id, new_id), encoding="utf-8"
            )
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and new_id in e.conversation_ids
            )
    assert (await orch.get_session(new_id)).conversation_id == new_id


async def test_forced_polling_says_so_and_still_imports(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, codex = homes
    await orch.import_sources(claude, codex, workers=0)
    before = await context_tokens(orch, CLAUDE_SESSION)
    transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
    with recording(orch.bus) as seen:
        async with Supervisor(
            orch, claude_dir=claude, codex_dir=codex, force_polling=True, rescan_s=0.2, **FAST
        ):
            status = await seen.wait_for(
                lambda e: isinstance(e, WatchStatus) and e.transcripts == "polling"
            )
            assert isinstance(status, WatchStatus)
            assert status.reason is not None
            assert "force" in status.reason
            with transcript.open("a", encoding="utf-8") as f:
                f.write(assistant_line(CLAUDE_SESSION, before + 777, 2) + "\n")
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and CLAUDE_SESSION in e.conversation_ids
            )
    assert await context_tokens(orch, CLAUDE_SESSION) == before + 777


async def test_missing_folders_poll_until_one_appears_then_watch(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    claude, codex = tmp_path / "no-claude", tmp_path / "no-codex"
    with recording(orch.bus) as seen:
        async with Supervisor(orch, claude_dir=claude, codex_dir=codex, rescan_s=0.2, **FAST):
            status = await seen.wait_for(
                lambda e: isinstance(e, WatchStatus) and e.transcripts == "polling"
            )
            assert isinstance(status, WatchStatus)
            assert status.reason is not None
            assert "exists yet" in status.reason
            copy_tree(REALDATA / "claude", claude)
            await seen.wait_for(
                lambda e: isinstance(e, WatchStatus) and e.transcripts == "watching"
            )
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and CLAUDE_SESSION in e.conversation_ids
            )


async def test_a_purged_session_stays_purged_when_its_transcript_grows(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, codex = homes
    await orch.import_sources(claude, codex, workers=0)
    await orch.purge(CLAUDE_SESSION, force=True)
    transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
    other = next(p for p in (claude / "projects").rglob("*.jsonl") if p != transcript)
    with recording(orch.bus) as seen:
        async with Supervisor(orch, claude_dir=claude, codex_dir=codex, **FAST):
            with transcript.open("a", encoding="utf-8") as f:
                f.write(assistant_line(CLAUDE_SESSION, 50_000, 3) + "\n")
            other.touch()  # a second change, so there is an event to wait for
            with other.open("a", encoding="utf-8") as f:
                f.write("\n")
            await seen.wait_for(lambda e: isinstance(e, SessionsChanged))
    assert not await orch.store.sessions.exists(CLAUDE_SESSION)


async def test_a_folder_with_an_undecodable_name_never_stops_the_watching(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    # Another program may name a folder in bytes that are not UTF-8; the file
    # events library cannot decode such a path. Watching goes on (by events, or
    # by re-scanning with the reason said), and the grown transcript is seen.
    claude, codex = homes
    await orch.import_sources(claude, codex, workers=0)
    before = await context_tokens(orch, CLAUDE_SESSION)
    transcript = claude / "projects" / CLAUDE_PROJECT / f"{CLAUDE_SESSION}.jsonl"
    with recording(orch.bus) as seen:
        async with Supervisor(
            orch, claude_dir=claude, codex_dir=codex, rescan_s=0.3, **FAST
        ) as supervisor:
            bad = os.fsencode(claude / "projects") + b"/\xff\xfe-project"
            os.mkdir(bad)
            fd = os.open(bad + b"/x.jsonl", os.O_CREAT | os.O_WRONLY, 0o600)
            os.write(fd, b"{}\n")
            os.close(fd)
            await asyncio.sleep(0.5)  # let the watcher meet the folder first
            with transcript.open("a", encoding="utf-8") as f:
                f.write(assistant_line(CLAUDE_SESSION, before + 777, 1) + "\n")
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and CLAUDE_SESSION in e.conversation_ids
            )
            status = supervisor.watch_status
            assert status.transcripts == "watching" or (
                status.transcripts == "polling" and status.reason
            )
    assert await context_tokens(orch, CLAUDE_SESSION) == before + 777
