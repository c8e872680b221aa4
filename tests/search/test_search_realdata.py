"""Full-content search over the real transcripts, imported into a temp store."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from support import finished, query

from core.errors import InvalidCursor, InvalidRequest
from core.models import SearchPage, SessionMode, SessionScope, SessionState
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

CLAUDE_HELPER = "cb2e607c-c758-415a-8b45-c49e4631906a"  # coderabbit-review-helper
CLAUDE_HELPER_FILE = "-Users-dain-workspace-coderabbit-review-helper/" + CLAUDE_HELPER + ".jsonl"
CLAUDE_LOG = "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"
CLAUDE_LOG_FILE = "-Users-dain-workspace-claude-code-log-sample/" + CLAUDE_LOG + ".jsonl"
CODEX_BUDGETS = "019e1695-0522-7c83-8b39-0dd379793f80"
# Said by the assistant in the middle of CLAUDE_HELPER, nowhere in its title.
BODY_PHRASE = '"rename the file during packaging"'


async def _imported(orch: AgentOrchestrator, homes: tuple[Path, Path]) -> None:
    await orch.import_sources(*homes)


def _ids(page: SearchPage) -> list[str]:
    return [r.session.conversation_id for r in page.results]


def _highlighted(page: SearchPage) -> list[str]:
    return [
        r.snippet.text[h.start : h.end].casefold()
        for r in page.results
        if r.snippet is not None
        for h in r.snippet.highlights
    ]


async def test_a_phrase_said_only_in_a_message_body_is_found(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await _imported(orch, homes)
    session = await orch.get_session(CLAUDE_HELPER)
    assert "packaging" not in session.title.casefold()

    page = await orch.search_sessions(BODY_PHRASE)

    assert _ids(page) == [CLAUDE_HELPER]
    [result] = page.results
    assert result.snippet is not None
    assert result.snippet.role == "assistant"
    marked = " ".join(_highlighted(page))
    assert marked == "rename the file during packaging"


async def test_words_prefixes_and_snippet_spans(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await _imported(orch, homes)

    word = await orch.search_sessions("hatchling", limit=50)
    prefix = await orch.search_sessions("hatchl*", limit=50)

    assert CLAUDE_HELPER in _ids(word)
    assert set(_ids(word)) <= set(_ids(prefix))
    assert all(text == "hatchling" for text in _highlighted(word))
    assert all(text.startswith("hatchl") for text in _highlighted(prefix))
    scores = [r.score for r in word.results]
    assert scores == sorted(scores)  # best (lowest bm25) first


async def test_tool_output_is_not_indexed(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, codex = homes
    await _imported(orch, homes)
    # Both words are in the files, only inside tool results / function call output.
    assert b"TestCombinedTranscriptLink" in (claude / "projects" / CLAUDE_LOG_FILE).read_bytes()
    rollout = next(codex.rglob(f"rollout-*-{CODEX_BUDGETS}.jsonl"))
    assert b"projectBudgets" in rollout.read_bytes()

    for word in ("TestCombinedTranscriptLink", "projectBudgets"):
        assert (await orch.search_sessions(word)).results == []


async def test_an_appended_line_is_searchable_after_the_incremental_import(
    orch: AgentOrchestrator, homes: tuple[Path, Path], data_dir: Path
) -> None:
    claude, _ = homes
    await _imported(orch, homes)
    path = claude / "projects" / CLAUDE_HELPER_FILE
    docs_before = query(data_dir, "SELECT count(*) FROM search_docs")[0][0]
    last = json.loads(path.read_bytes().splitlines()[-1])
    line = {
        **{k: last[k] for k in ("sessionId", "cwd", "version") if k in last},
        "type": "user",
        "uuid": "appended-1",
        "parentUuid": None,
        "timestamp": "2025-11-17T13:00:00.000Z",
        "message": {"role": "user", "content": "what about the quokkaflavoured tarball?"},
    }
    appended = json.dumps(line).encode() + b"\n"
    with path.open("ab") as f:
        f.write(appended)
    assert (await orch.search_sessions("quokkaflavoured")).results == []

    report = await orch.import_sources(*homes)

    assert report.bytes_read == len(appended)  # the appended line only
    page = await orch.search_sessions("quokkaflavoured")
    assert _ids(page) == [CLAUDE_HELPER]
    assert page.results[0].snippet is not None
    assert page.results[0].snippet.role == "user"
    # The new text fills the file's last part up (or starts one): nothing re-indexed twice.
    docs_after = query(data_dir, "SELECT count(*) FROM search_docs")[0][0]
    assert docs_after in (docs_before, docs_before + 1)
    assert _ids(await orch.search_sessions(BODY_PHRASE)) == [CLAUDE_HELPER]


def _user_line(path: Path, uuid: str, at: str, text: str) -> bytes:
    """A Claude Code prompt line for the session in ``path``."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    line = {
        **{k: last[k] for k in ("sessionId", "cwd", "version") if k in last},
        "type": "user",
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": at,
        "message": {"role": "user", "content": text},
    }
    return json.dumps(line).encode() + b"\n"


async def test_a_phrase_never_runs_from_one_message_into_the_next(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, _ = homes
    path = claude / "projects" / CLAUDE_HELPER_FILE
    with path.open("ab") as f:
        f.write(_user_line(path, "a-1", "2025-11-17T13:00:00.000Z", "first ends with zulufirst"))
        f.write(_user_line(path, "a-2", "2025-11-17T13:01:00.000Z", "zulusecond starts this"))
    await _imported(orch, homes)

    across = await orch.search_sessions('"zulufirst zulusecond"')
    both = await orch.search_sessions("zulusecond zulufirst")

    assert across.results == []
    assert _ids(both) == [CLAUDE_HELPER]  # two words of one session, said close together
    snippet = both.results[0].snippet
    assert snippet is not None
    assert snippet.role == "user"
    assert snippet.at is not None
    assert snippet.at.minute in (0, 1)
    assert "\ue000" not in snippet.text
    assert "\n" not in snippet.text


async def test_a_match_deep_in_a_long_message_gets_a_short_snippet_around_it(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    claude, _ = homes
    path = claude / "projects" / CLAUDE_HELPER_FILE
    filler = " ".join(f"filler{i}" for i in range(4000))  # about 40 KB
    text = f"{filler} the quokkaflavoured tarball again {filler}"
    with path.open("ab") as f:
        f.write(_user_line(path, "long-1", "2025-11-17T13:00:00.000Z", text))
    await _imported(orch, homes)

    page = await orch.search_sessions("quokkaflavoured")

    assert _ids(page) == [CLAUDE_HELPER]
    snippet = page.results[0].snippet
    assert snippet is not None
    assert snippet.text.startswith("…")
    assert snippet.text.endswith("…")
    assert len(snippet.text.split()) <= 17
    assert [snippet.text[h.start : h.end] for h in snippet.highlights] == ["quokkaflavoured"]


async def test_a_rewritten_file_is_indexed_again(
    orch: AgentOrchestrator, homes: tuple[Path, Path], data_dir: Path
) -> None:
    claude, _ = homes
    await _imported(orch, homes)
    path = claude / "projects" / CLAUDE_HELPER_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    first_user = next(json.loads(raw) for raw in lines if json.loads(raw).get("type") == "user")
    first_user.pop("isMeta", None)
    first_user["message"]["content"] = "a rewritten conversation about wombatine sprockets"
    path.write_bytes(json.dumps(first_user).encode() + b"\n")

    await orch.import_sources(*homes)

    assert _ids(await orch.search_sessions("wombatine sprockets")) == [CLAUDE_HELPER]
    assert (await orch.search_sessions(BODY_PHRASE)).results == []
    docs = query(
        data_dir,
        "SELECT kind, count(*) FROM search_docs WHERE conversation_id = ? GROUP BY kind",
        (CLAUDE_HELPER,),
    )
    assert dict(docs) == {"title": 1, "texts": 1}  # the title, and one part of one text


async def test_filters_agent_state_branch_cwd(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await _imported(orch, homes)
    everything = await orch.search_sessions("the", limit=100)
    assert {r.session.source for r in everything.results} == {"claude-code", "codex"}

    codex = await orch.search_sessions("agent:codex the", limit=100)
    assert codex.results
    assert {r.session.agent_id for r in codex.results} == {"codex"}
    claude = await orch.search_sessions("agent:CLAUDE the", limit=100)  # a prefix, any case
    assert claude.results
    assert {r.session.agent_id for r in claude.results} == {"claude-code"}

    # The session and its sub-agents ran on that branch, in that folder.
    branch = await orch.search_sessions("branch:comment-attribution the", limit=100)
    assert CLAUDE_HELPER in _ids(branch)
    assert len(branch.results) < len(everything.results)
    assert all("comment-attribution" in (r.session.git_branch or "") for r in branch.results)
    cwd = await orch.search_sessions('cwd:"coderabbit-review" the', limit=100)
    assert CLAUDE_HELPER in _ids(cwd)
    assert len(cwd.results) < len(everything.results)
    assert all("coderabbit-review" in r.session.cwd for r in cwd.results)
    both = await orch.search_sessions("agent:codex agent:claude the", limit=100)  # OR
    assert set(_ids(both)) == set(_ids(everything))

    idle_only = await orch.search_sessions("state:idle", limit=100)
    assert idle_only.results
    assert all(r.snippet is None for r in idle_only.results)
    assert (await orch.search_sessions("state:ready the")).results == []


async def test_state_ready_and_our_own_messages(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await _imported(orch, homes)
    ready = finished("ready-1", 2_000_000_000_000_000, mode=SessionMode.DETACHED)
    await orch.store.bulk.insert([ready])
    [handle] = await orch.delegate(prompt="please summarise the capybara report")
    await handle.wait()

    found = await orch.search_sessions("state:ready")
    assert _ids(found) == ["ready-1"]
    assert _ids(await orch.search_sessions("state:ready message")) == ["ready-1"]
    assert (await orch.get_session("ready-1")).state is SessionState.READY

    ours = await orch.search_sessions("capybara")
    assert _ids(ours) == [handle.conversation_id]
    roles = {r.snippet.role for r in ours.results if r.snippet}
    assert roles <= {"user", "assistant", "title"}


async def test_archived_and_purged_sessions_drop_out_and_stay_out(
    orch: AgentOrchestrator, homes: tuple[Path, Path], data_dir: Path
) -> None:
    await _imported(orch, homes)
    assert _ids(await orch.search_sessions(BODY_PHRASE)) == [CLAUDE_HELPER]

    await orch.dismiss(CLAUDE_HELPER)  # archived: out of the pool's search, still indexed
    assert (await orch.search_sessions(BODY_PHRASE)).results == []
    archive = SessionScope(archived=True)
    assert _ids(await orch.search_sessions(BODY_PHRASE, scope=archive)) == [CLAUDE_HELPER]
    await orch.purge(CLAUDE_HELPER)
    assert query(
        data_dir, "SELECT count(*) FROM search_docs WHERE conversation_id = ?", (CLAUDE_HELPER,)
    ) == [(0,)]

    claude, _ = homes
    path = claude / "projects" / CLAUDE_HELPER_FILE
    with path.open("ab") as f:  # the transcript grows: the session stays dismissed
        f.write(b'{"type":"summary","summary":"more"}\n')
    await orch.import_sources(*homes)
    assert (await orch.search_sessions(BODY_PHRASE)).results == []


async def test_pages_follow_the_cursor_in_order(
    orch: AgentOrchestrator, homes: tuple[Path, Path]
) -> None:
    await _imported(orch, homes)
    whole = await orch.search_sessions("the", limit=100)
    assert len(whole.results) > 5

    seen: list[str] = []
    cursor = None
    while True:
        page = await orch.search_sessions("the", limit=2, cursor=cursor)
        seen += _ids(page)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == _ids(whole)

    first = await orch.search_sessions("the", limit=2)
    assert first.next_cursor is not None
    with pytest.raises(InvalidCursor):
        await orch.search_sessions("a", limit=2, cursor=first.next_cursor)
    with pytest.raises(InvalidCursor):
        await orch.search_sessions("the", limit=2, cursor="bm90IGEgY3Vyc29y")


HOSTILE = [
    'foo" OR *',
    "NEAR(",
    "NEAR(a b, 2)",
    "* OR *",
    '"',
    '""',
    '"unterminated phrase',
    "a AND OR NOT b",
    "col:value",
    "body:test",
    "^test",
    "test)",
    "(",
    "-test",
    "'; DROP TABLE sessions; --",
    "\x00nul\x00",
    "\ud800lone surrogate",
    "x" * 999,
    'agent:"',
    "cwd:'",
    "{body}: the",
    "the*" * 20,
]


@pytest.mark.parametrize("text", HOSTILE)
async def test_hostile_queries_are_data(
    orch: AgentOrchestrator, homes: tuple[Path, Path], text: str
) -> None:
    await _imported(orch, homes)
    with contextlib.suppress(InvalidRequest):  # a typed error is fine; nothing else is
        await orch.search_sessions(text, limit=5)
    response = await call_tool(
        orch, "delegate_sessions", {"operation": "search", "query": text, "limit": 5}
    )
    assert response.get("status") != "error" or response["error"]["code"] == "invalid_request"
    every_session = SessionScope(top_level=False, warmup=True)
    assert await orch.count_sessions(scope=every_session) == 22  # nothing was dropped


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "nothing to search for"),
        ("   *** ", "nothing to search for"),
        ("state:", "needs a value"),
        ("state:done", "is not a session state"),
        ("x" * 1001, "under 1,000"),
    ],
)
async def test_queries_that_cannot_run_are_invalid_request(
    orch: AgentOrchestrator, text: str, problem: str
) -> None:
    with pytest.raises(InvalidRequest, match=problem):
        await orch.search_sessions(text)
    response = await call_tool(orch, "delegate_sessions", {"operation": "search", "query": text})
    assert response["status"] == "error"
    assert response["error"]["code"] == "invalid_request"


async def test_the_tool_needs_a_query_for_search_only(orch: AgentOrchestrator) -> None:
    missing = await call_tool(orch, "delegate_sessions", {"operation": "search"})
    stray = await call_tool(orch, "delegate_sessions", {"operation": "list", "query": "x"})
    for response in (missing, stray):
        assert response["error"]["code"] == "invalid_request"
