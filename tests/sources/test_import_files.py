"""Importing only the files a watcher named: the walk's rules, one file at a time."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from source_homes import Homes
from sources_support import SESSION, append, assistant, line, user, write
from support import query

from core.importing.importer import import_files, import_lock
from core.orchestrator import AgentOrchestrator

LAYOUT_2_PARENT = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
LAYOUT_2_AGENT = "a36efb2a1231c41e2"
LAYOUT_1_AGENT = "c8d9b115"
CODEX_ID = "019c8a53-a0dd-7130-bcd7-95445d84846a"


def _indexed(data_dir: Path) -> set[str]:
    return {str(r[0]) for r in query(data_dir, "SELECT path FROM source_files")}


async def test_only_the_named_files_are_read(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    layout2 = realdata.projects.glob(f"*/{LAYOUT_2_PARENT}/subagents/agent-{LAYOUT_2_AGENT}.jsonl")
    layout1 = realdata.projects.glob(f"*/agent-{LAYOUT_1_AGENT}.jsonl")
    named = [str(next(layout2)), str(next(layout1)), str(realdata.codex_file(CODEX_ID))]

    read = await import_files(orch.store, named, realdata.claude, realdata.codex)

    assert read == 3
    assert _indexed(data_dir) == set(named)
    sub = await orch.get_session(LAYOUT_2_AGENT)
    assert sub.parent_id == LAYOUT_2_PARENT  # the sub-agent layout is read from the path
    assert (await orch.get_session(LAYOUT_1_AGENT)).conversation_id == LAYOUT_1_AGENT
    assert (await orch.get_session(CODEX_ID)).source == "codex"


async def test_an_appended_file_is_read_from_where_it_stopped(
    orch: AgentOrchestrator, empty_homes: Homes, data_dir: Path
) -> None:
    path = write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", "hello"))
    await import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)
    offset = query(data_dir, "SELECT read_offset FROM source_files")[0][0]
    append(path, line(assistant("a1", "hi", "m1")))

    await import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)

    assert query(data_dir, "SELECT read_offset FROM source_files")[0][0] > offset
    session = await orch.get_session(SESSION)
    assert session.metrics.messages == 2


async def test_files_the_walk_would_skip_are_left_alone(
    orch: AgentOrchestrator, empty_homes: Homes, tmp_path: Path, data_dir: Path
) -> None:
    project = empty_homes.projects / "-work-app"
    outside = write(tmp_path / "elsewhere" / f"{SESSION}.jsonl", user("u1", "secret"))
    link = project / f"{SESSION}.jsonl"
    link.symlink_to(outside)  # resolves outside the agent's folder
    fifo = project / "22222222-2222-4222-8222-222222222222.jsonl"
    os.mkfifo(fifo)  # opening it would block
    stray = write(empty_homes.projects / "top-level.jsonl", user("u1", "not a project"))
    deep = write(project / "a" / "b" / "c.jsonl", user("u1", "not a layout"))
    beside = write(tmp_path / "not-a-root" / f"{SESSION}.jsonl", user("u1", "nowhere"))
    named = [str(p) for p in (link, fifo, stray, deep, beside)]

    read = await asyncio.wait_for(
        import_files(orch.store, named, empty_homes.claude, empty_homes.codex), 10
    )

    assert read == 0
    assert _indexed(data_dir) == set()


async def test_a_purged_session_is_not_brought_back(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", "hello"))
    await import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)
    await orch.purge(SESSION, force=True)
    append(path, line(assistant("a1", "hi", "m1")))

    await import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)

    assert not await orch.store.sessions.exists(SESSION)


async def test_it_waits_for_the_import_lock(
    orch: AgentOrchestrator, empty_homes: Homes, data_dir: Path
) -> None:
    path = write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", "hello"))
    async with import_lock(data_dir):
        task = asyncio.create_task(
            import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)
        )
        done, _ = await asyncio.wait({task}, timeout=0.3)
        assert not done  # another import holds the folder
        assert _indexed(data_dir) == set()
    assert await asyncio.wait_for(task, 10) == 1


@pytest.mark.parametrize("name", ["rollout-x.jsonl", "notes.jsonl"])
async def test_codex_files_must_be_rollouts(
    orch: AgentOrchestrator, empty_homes: Homes, name: str
) -> None:
    path = write(empty_homes.codex / "sessions" / "2026" / "01" / "01" / name, {"type": "x"})
    read = await import_files(orch.store, [str(path)], empty_homes.claude, empty_homes.codex)
    assert read == (1 if name.startswith("rollout-") else 0)
