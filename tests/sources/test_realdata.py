"""Importing every real transcript: the facts below were read off the files by hand."""

from __future__ import annotations

import json
from pathlib import Path

from source_homes import Homes
from support import query

from core.models import SessionScope, SessionState
from core.orchestrator import AgentOrchestrator

CLAUDE_MAIN = {
    "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8",
    "cb2e607c-c758-415a-8b45-c49e4631906a",
    "03eb5929-52b3-4b13-ada3-b93ae35806b8",
    "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a7da6a22-facc-4fcd-8bab-f83c87862004",
    "29ccd257-68b1-427f-ae5f-6524b7cb6f20",
}
# Sub-agents beside their session (Claude Code up to ~2.1.1) ...
LAYOUT_1 = {
    "2b93909d": "cb2e607c-c758-415a-8b45-c49e4631906a",
    "645808c9": "cb2e607c-c758-415a-8b45-c49e4631906a",
    "ea02459f": "cb2e607c-c758-415a-8b45-c49e4631906a",
    "c8d9b115": "a7da6a22-facc-4fcd-8bab-f83c87862004",
}
# ... and in <session>/subagents/ with a .meta.json (from 2.1.2).
LAYOUT_2 = {
    "a36efb2a1231c41e2": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a4ca7529859c158c2": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a52886dc180afb356": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a6aa8ad077d9ea083": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "ab1e6e141221a29ab": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "aef063ba534d73153": "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a2271d1": "29ccd257-68b1-427f-ae5f-6524b7cb6f20",
}
CODEX = {
    "019c8a53-a0dd-7130-bcd7-95445d84846a",
    "019c8a59-e9dd-71f0-9ae3-4079fe9726a9",
    "019c8a70-dda7-7f33-98ea-f30553347322",
    "019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
    "019e1695-0522-7c83-8b39-0dd379793f80",
}
SUMMARY_ONLY = "4e27c414-a885-46a0-b5c8-d58e1417377d"
ZERO_BYTES = "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58"


async def _import(orch: AgentOrchestrator, homes: Homes):  # type: ignore[no-untyped-def]
    return await orch.import_sources(homes.claude, homes.codex)


async def _all(orch: AgentOrchestrator) -> dict[str, object]:
    page = await orch.list_sessions(100, scope=SessionScope(top_level=False, warmup=True))
    assert page.next_cursor is None
    return {s.conversation_id: s for s in page.sessions}


async def test_every_session_is_imported_once_with_its_source(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    report = await _import(orch, realdata)

    sessions = await _all(orch)
    claude_ids = CLAUDE_MAIN | set(LAYOUT_1) | set(LAYOUT_2)
    assert set(sessions) == claude_ids | CODEX
    assert len(claude_ids) == 17
    for cid, s in sessions.items():
        source = "codex" if cid in CODEX else "claude-code"
        assert (s.source, s.agent_id, s.state, s.mode.value) == (  # type: ignore[attr-defined]
            source,
            source,
            SessionState.IDLE,
            "standard",
        )
    assert report.files_seen == 24  # 19 Claude Code transcripts + 5 Codex rollouts
    assert report.files_read == 24
    assert report.sessions_added == 22
    assert report.files_without_session == 2  # the zero-byte and the summary-only file
    assert report.malformed_lines == report.unknown_lines == report.oversized_lines == 0
    assert report.unreadable == []


async def test_zero_byte_and_summary_only_files_make_no_session(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    await _import(orch, realdata)
    sessions = await _all(orch)
    assert SUMMARY_ONLY not in sessions
    assert ZERO_BYTES not in sessions
    # Both are indexed all the same, so a re-scan does not open them again.
    rows = query(
        data_dir,
        "SELECT size, read_offset, conversation_id FROM source_files WHERE path LIKE ?",
        ("%4e27c414%",),
    )
    assert rows == [(117, 117, None)]
    rows = query(
        data_dir,
        "SELECT size, read_offset FROM source_files WHERE path LIKE ?",
        ("%4fe49c7c%",),
    )
    assert rows == [(0, 0)]


async def test_sub_agents_of_both_layouts_are_children_of_their_session(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await _import(orch, realdata)
    sessions = await _all(orch)
    for child, parent in {**LAYOUT_1, **LAYOUT_2}.items():
        assert sessions[child].parent_id == parent, child  # type: ignore[attr-defined]
        assert parent in sessions
    for cid in CLAUDE_MAIN | CODEX:
        assert sessions[cid].parent_id is None  # type: ignore[attr-defined]


async def test_titles(orch: AgentOrchestrator, realdata: Homes) -> None:
    await _import(orch, realdata)
    titles = {cid: s.title for cid, s in (await _all(orch)).items()}  # type: ignore[attr-defined]
    # A summary line names the session (the last one, when there are several).
    assert (
        titles["37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"] == "Cache Version Compatibility Tests Added"
    )
    assert (
        titles["a7da6a22-facc-4fcd-8bab-f83c87862004"] == "Claude Code CLI Tool Development Summary"
    )
    # Else the first prompt a person typed: the IDE selection block around it is not it.
    assert titles["cb2e607c-c758-415a-8b45-c49e4631906a"].startswith(
        "How can I make this possible to install as a library with `uv`"
    )
    assert titles["29ccd257-68b1-427f-ae5f-6524b7cb6f20"].startswith(
        "Use the Explore task in sub-agents with Haiku model"
    )
    assert titles["03eb5929-52b3-4b13-ada3-b93ae35806b8"].startswith(
        "Ok, so there's isn't much to see here"
    )
    assert all(len(t) <= 80 for t in titles.values())
    # Layout-2 sub-agents: the description in their .meta.json.
    assert titles["a36efb2a1231c41e2"] == "Round 2: alice comparison"
    assert titles["a4ca7529859c158c2"] == "Research Claude Code plan mode"
    # A warmup sidechain has nothing better than its "Warmup".
    assert titles["2b93909d"] == "Warmup"
    # Codex: the request part of the first user message.
    assert titles["019e1695-0522-7c83-8b39-0dd379793f80"].startswith(
        "analyze trascript and summarzie action items related to codemie"
    )
    assert (
        titles["019c8a70-dda7-7f33-98ea-f30553347322"] == "[REDACTED_MESSAGE len=86 sha=2239bcba]"
    )


async def test_cwd_branch_and_times(orch: AgentOrchestrator, realdata: Homes) -> None:
    await _import(orch, realdata)
    s = await _all(orch)

    def facts(cid: str) -> tuple[object, ...]:
        x = s[cid]
        return (
            x.cwd,  # type: ignore[attr-defined]
            x.git_branch,  # type: ignore[attr-defined]
            x.created_at.isoformat(),  # type: ignore[attr-defined]
            x.last_interacted_at.isoformat(),  # type: ignore[attr-defined]
        )

    assert facts("cb2e607c-c758-415a-8b45-c49e4631906a") == (
        "/Users/dain/workspace/coderabbit-review-helper",
        "fix/comment-attribution-and-pagination",
        "2025-11-17T11:23:23.498000+00:00",
        "2025-11-17T12:02:50.937000+00:00",
    )
    # The session started in the project root, then cd'ed into test/.
    assert facts("37f83ec9-f2ea-42a9-925e-0d5c105cb6e8")[:2] == (
        "/Users/dain/workspace/claude-code-log",
        None,  # version 1.0.51 wrote no gitBranch
    )
    assert facts("03eb5929-52b3-4b13-ada3-b93ae35806b8")[1] == "HEAD"  # a detached head
    assert facts("29ccd257-68b1-427f-ae5f-6524b7cb6f20")[1] is None  # gitBranch ""
    # A worktree sub-agent works on its own branch.
    assert facts("a4ca7529859c158c2")[:2] == (
        "-experiments/worktrees/.claude/worktrees/agent-a4ca7529",
        "worktree-agent-a4ca7529",
    )
    # Codex: session_meta's cwd, git branch and start time; the last line's time.
    assert facts("019e1695-0522-7c83-8b39-0dd379793f80") == (
        "/Users/Sample_User/naya",
        None,
        "2026-05-11T10:28:45.482000+00:00",
        "2026-05-11T11:48:14.988000+00:00",
    )
    assert facts("019c8a53-a0dd-7130-bcd7-95445d84846a")[:2] == (
        "/redacted/path/59b923df4d",
        "main",
    )


def _claude_usage(path: Path) -> tuple[int, int, int]:
    """(naive sum over lines, sum de-duplicated by message.id, context of the last usage:
    what that call read)."""
    naive, by_id, last = 0, {}, 0
    for raw in path.read_bytes().splitlines():
        obj = json.loads(raw)
        usage = obj.get("message", {}).get("usage") if obj.get("type") == "assistant" else None
        if not usage:
            continue
        total = (
            usage["input_tokens"]
            + usage.get("cache_creation_input_tokens", 0)
            + usage.get("cache_read_input_tokens", 0)
            + usage["output_tokens"]
        )
        naive += total
        by_id[obj["message"]["id"]] = total
        last = (total - usage["output_tokens"]) or last
    return naive, sum(by_id.values()), last


async def test_claude_tokens_are_deduplicated_and_context_is_the_last_usage(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await _import(orch, realdata)
    s = await _all(orch)
    small = s["29ccd257-68b1-427f-ae5f-6524b7cb6f20"]
    # Two API responses; what the last one read: 0 + 3,903 + 20,051 (and it wrote 1).
    assert small.metrics.tokens == 44_009  # type: ignore[attr-defined]
    assert small.context.used_tokens == 0 + 3903 + 20051  # type: ignore[attr-defined]
    assert small.context.limit_tokens == 200_000  # type: ignore[attr-defined]
    warmup = s["2b93909d"]
    assert (warmup.metrics.tokens, warmup.context.used_tokens) == (1004 + 48, 1004)  # type: ignore[attr-defined]
    deep = s["a7da6a22-facc-4fcd-8bab-f83c87862004"]
    assert (deep.metrics.tokens, deep.context.used_tokens) == (8_714_053, 3 + 149 + 134_124)  # type: ignore[attr-defined]
    # The same figures from a plain re-count of every Claude transcript.
    for path in realdata.projects.rglob("*.jsonl"):
        stem = path.stem.removeprefix("agent-")
        if stem not in s:
            continue
        naive, deduped, last = _claude_usage(path)
        assert s[stem].metrics.tokens == deduped, path  # type: ignore[attr-defined]
        assert s[stem].context.used_tokens == last, path  # type: ignore[attr-defined]
        assert s[stem].metrics.bytes == path.stat().st_size  # type: ignore[attr-defined]
        if stem == "a7da6a22-facc-4fcd-8bab-f83c87862004":
            assert naive > deduped  # 177 assistant lines, 103 responses: repeats are real


async def test_codex_meter_is_the_last_request_not_the_cumulative_total(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    await _import(orch, realdata)
    s = await _all(orch)
    big = s["019c8a59-e9dd-71f0-9ae3-4079fe9726a9"]
    # Last token_count: last_token_usage.input_tokens 162,073 of a 258,400 window;
    # total_token_usage.total_tokens 33,944,484 is cumulative over all requests.
    assert (big.context.used_tokens, big.context.limit_tokens) == (162_073, 258_400)  # type: ignore[attr-defined]
    assert big.metrics.tokens == 33_944_484  # type: ignore[attr-defined]
    assert big.metrics.turns == 38  # type: ignore[attr-defined]
    other = s["019c8a53-a0dd-7130-bcd7-95445d84846a"]
    assert (other.context.used_tokens, other.metrics.turns) == (143_372, 7)  # type: ignore[attr-defined]
    # A rollout without a single token_count line has an empty meter.
    bare = s["019e1695-0522-7c83-8b39-0dd379793f80"]
    assert (bare.context.used_tokens, bare.context.limit_tokens, bare.metrics.tokens) == (0, 0, 0)  # type: ignore[attr-defined]
    assert bare.metrics.turns == 3  # type: ignore[attr-defined]
    # The compaction of the long rollout is counted.
    rows = query(data_dir, "SELECT path, compactions FROM source_files WHERE compactions > 0")
    assert [(Path(p).name[-42:], n) for p, n in rows] == [
        ("019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl", 1)
    ]


async def test_a_rollout_cut_off_mid_turn(orch: AgentOrchestrator, realdata: Homes) -> None:
    await _import(orch, realdata)
    cid = "019c8a70-dda7-7f33-98ea-f30553347322"
    session = await orch.get_session(cid)
    # One prompt, one commentary message, one function call that never got its output.
    assert (session.metrics.turns, session.metrics.messages) == (1, 3)
    assert session.context.used_tokens == 34_469
    page = await orch.recent_messages(cid, 10)
    assert [m.role.value for m in page.messages] == ["assistant", "assistant", "user"]
    newest = page.messages[0]
    assert newest.tool is not None
    assert newest.tool["call_id"] == "call_UtYwHmwWekzvq83m8Rb9K8jJ"
    assert newest.tool["name"] == "exec_command"
    assert page.next_cursor is None


async def test_claude_compaction_is_counted(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    from sources_support import append, assistant, envelope, line, user

    path = realdata.claude_file(
        "-src-experiments-claude_p", "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
    )
    await _import(orch, realdata)
    before = await orch.get_session("29ccd257-68b1-427f-ae5f-6524b7cb6f20")
    boundary = envelope(
        "system",
        "c-1",
        "2026-01-23T18:00:00.000Z",
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "manual", "preTokens": 23955},
    )
    summary = user("c-2", "This session is being continued...", isCompactSummary=True)
    reply = assistant("c-3", "Continuing.", "msg_after", usage=(3, 500, 4000, 7))
    append(path, line(boundary) + line(summary) + line(reply))

    await _import(orch, realdata)

    after = await orch.get_session("29ccd257-68b1-427f-ae5f-6524b7cb6f20")
    assert after.metrics.turns == before.metrics.turns  # a compact summary is not a prompt
    assert after.metrics.messages == before.metrics.messages + 3
    assert after.context.used_tokens == 3 + 500 + 4000
    rows = query(data_dir, "SELECT compactions FROM source_files WHERE path = ?", (str(path),))
    assert rows == [(1,)]
    page = await orch.recent_messages("29ccd257-68b1-427f-ae5f-6524b7cb6f20", 3)
    assert [m.role.value for m in page.messages] == ["assistant", "system", "system"]
    assert page.messages[2].content == "context compacted (manual, 23955 tokens before)"


async def test_warm_up_sub_agents_are_marked_and_left_out_of_child_counts(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    """A Claude Code sub-agent whose only prompt is "Warmup" is a warm-up."""
    await _import(orch, realdata)
    s = await _all(orch)
    assert {cid for cid, session in s.items() if session.warmup} == {"2b93909d", "645808c9"}  # type: ignore[attr-defined]
    parent = "cb2e607c-c758-415a-8b45-c49e4631906a"
    assert (await orch.get_session(parent)).child_count == 1
    shown = await orch.list_children(parent)
    assert [c.conversation_id for c in shown.sessions] == ["ea02459f"]
    every = await orch.list_children(parent, scope=SessionScope(warmup=True))
    assert {c.conversation_id for c in every.sessions} == set(LAYOUT_1) - {"c8d9b115"}
    # Imported again, a warm-up stays one.
    await _import(orch, realdata)
    assert (await orch.get_session("2b93909d")).warmup
