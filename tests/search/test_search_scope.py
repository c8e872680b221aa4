"""Search in a scope, the archive (``state:archived``) and session names, on real transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli

from core.errors import InvalidCursor
from core.models import SearchPage, SessionScope
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

CLAUDE_HELPER = "cb2e607c-c758-415a-8b45-c49e4631906a"  # coderabbit-review-helper
# Said by the assistant in the middle of CLAUDE_HELPER, nowhere in its title.
BODY_PHRASE = '"rename the file during packaging"'


def _ids(page: SearchPage) -> list[str]:
    return [r.session.conversation_id for r in page.results]


async def test_archived_sessions_are_found_with_state_archived_only(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await orch.import_sources(*homes)
    await orch.archive(CLAUDE_HELPER)

    in_pool = await orch.search_sessions(BODY_PHRASE)
    archived = await orch.search_sessions(f"{BODY_PHRASE} state:archived")
    archive_view = await orch.search_sessions(BODY_PHRASE, scope=SessionScope(archived=True))
    either = await orch.search_sessions("state:idle state:archived", limit=100)
    idle_only = await orch.search_sessions("state:idle", limit=100)

    assert in_pool.results == []
    assert _ids(archived) == [CLAUDE_HELPER]
    assert archived.results[0].session.archived_at is not None
    assert _ids(archive_view) == [CLAUDE_HELPER]
    assert CLAUDE_HELPER in _ids(either)
    assert CLAUDE_HELPER not in _ids(idle_only)
    assert set(_ids(idle_only)) < set(_ids(either))

    await orch.restore(CLAUDE_HELPER)
    assert _ids(await orch.search_sessions(BODY_PHRASE)) == [CLAUDE_HELPER]
    assert (await orch.search_sessions(f"{BODY_PHRASE} state:archived")).results == []


async def test_the_scope_limits_what_is_searched(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await orch.import_sources(*homes)
    cwd = (await orch.get_session(CLAUDE_HELPER)).cwd
    everywhere = await orch.search_sessions("the", limit=100)
    assert {r.session.cwd for r in everywhere.results} != {cwd}  # other projects match too

    here = await orch.search_sessions("the", limit=100, scope=SessionScope(roots=(cwd,)))
    elsewhere = await orch.search_sessions(
        BODY_PHRASE, scope=SessionScope(roots=(cwd + "-elsewhere",))
    )
    on_branch = await orch.search_sessions(BODY_PHRASE, scope=SessionScope(branch="no-such-branch"))

    assert CLAUDE_HELPER in _ids(here)
    assert {r.session.cwd for r in here.results} == {cwd}
    assert elsewhere.results == []
    assert on_branch.results == []


async def test_a_cursor_belongs_to_its_scope(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await orch.import_sources(*homes)
    first = await orch.search_sessions("the", limit=2)
    assert first.next_cursor is not None

    with pytest.raises(InvalidCursor):
        await orch.search_sessions(
            "the", limit=2, cursor=first.next_cursor, scope=SessionScope(archived=True)
        )


async def test_a_name_is_searchable_and_follows_each_rename(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    # The store's rename: the index follows the column (a trigger), whoever renames.
    await orch.import_sources(*homes)
    assert (await orch.search_sessions("wombatlike")).results == []

    await orch.store.archive.rename(CLAUDE_HELPER, "Wombatlike packaging fix")
    named = await orch.search_sessions("wombatlike")

    assert _ids(named) == [CLAUDE_HELPER]
    snippet = named.results[0].snippet
    assert snippet is not None
    assert snippet.role == "title"
    assert [snippet.text[h.start : h.end] for h in snippet.highlights] == ["Wombatlike"]

    await orch.store.archive.rename(CLAUDE_HELPER, "Koalaish cleanup")
    assert (await orch.search_sessions("wombatlike")).results == []
    assert _ids(await orch.search_sessions("koalaish")) == [CLAUDE_HELPER]

    await orch.store.archive.rename(CLAUDE_HELPER, None)
    assert (await orch.search_sessions("koalaish")).results == []
    assert _ids(await orch.search_sessions(BODY_PHRASE)) == [CLAUDE_HELPER]  # texts kept


async def test_a_name_survives_a_reimport_of_the_transcript(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, _ = homes
    await orch.import_sources(*homes)
    await orch.store.archive.rename(CLAUDE_HELPER, "Wombatlike packaging fix")
    path = next((claude / "projects").rglob(f"{CLAUDE_HELPER}.jsonl"))
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # shorter: read again from the start

    await orch.import_sources(*homes)

    assert _ids(await orch.search_sessions("wombatlike")) == [CLAUDE_HELPER]


SUBAGENT = "agent-a4ca7529859c158c2"  # a Claude Code sub-agent ("Research Claude Code plan mode")
SUBAGENT_WORD = "containment"  # said in that sub-agent only


async def test_the_cli_and_the_tool_search_sub_agents_like_their_listings(
    orch: AgentOrchestrator, homes: tuple[Path, Path], data_dir: Path
) -> None:
    await orch.import_sources(*homes)
    found = await orch.search_sessions(SUBAGENT_WORD, scope=SessionScope(top_level=False))
    [sub] = found.results
    assert sub.session.parent_id is not None
    # The default scope reads a sub-agent under its parent, as the default listing does.
    assert (await orch.search_sessions(SUBAGENT_WORD)).results == []

    tool = await call_tool(
        orch, "delegate_sessions", {"operation": "search", "query": SUBAGENT_WORD}
    )
    cli = run_cli(
        "--data-dir", str(data_dir), "sessions", "search", SUBAGENT_WORD, "--json",
        home=data_dir.parent,
    )  # fmt: skip

    assert [r["session"]["conversation_id"] for r in tool["results"]] == [
        sub.session.conversation_id
    ]
    assert cli.returncode == 0, cli.stderr
    assert [r["session"]["conversation_id"] for r in json.loads(cli.stdout)["results"]] == [
        sub.session.conversation_id
    ]
