"""Re-scans: unchanged files are only stat'ed, appends are read from the last offset."""

from __future__ import annotations

import os
from pathlib import Path

from source_homes import Homes
from sources_support import SESSION, append, assistant, line, user, write
from support import finished, query

from core.models import SessionState
from core.orchestrator import AgentOrchestrator

CLAUDE_ID = "03eb5929-52b3-4b13-ada3-b93ae35806b8"


def _claude(homes: Homes) -> Path:
    return homes.claude_file("-experiments-ideas", f"{CLAUDE_ID}.jsonl")


async def test_unchanged_rescan_reads_nothing(orch: AgentOrchestrator, realdata: Homes) -> None:
    first = await orch.import_sources(realdata.claude, realdata.codex)
    again = await orch.import_sources(realdata.claude, realdata.codex)

    assert first.bytes_read == sum(
        p.stat().st_size
        for p in [*realdata.claude.rglob("*.jsonl"), *realdata.codex.rglob("*.jsonl")]
    )
    assert (again.files_seen, again.files_skipped_unchanged) == (24, 24)
    assert (again.files_read, again.bytes_read, again.head_bytes_read) == (0, 0, 0)
    assert (again.sessions_added, again.sessions_updated) == (0, 0)


async def test_append_reads_only_the_new_bytes(orch: AgentOrchestrator, realdata: Homes) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    before = await orch.get_session(CLAUDE_ID)
    path = _claude(realdata)
    new = line(user("u-new", "One more question", "2026-02-18T09:00:00.000Z")) + line(
        assistant("a-new", "One more answer", "msg_new", "2026-02-18T09:00:05.000Z")
    )
    append(path, new)

    report = await orch.import_sources(realdata.claude, realdata.codex)

    assert (report.files_read, report.files_rewritten) == (1, 0)
    assert report.bytes_read == len(new)
    assert report.head_bytes_read <= 2 * 4096  # the prefix check, nothing more
    assert report.sessions_updated == 1
    after = await orch.get_session(CLAUDE_ID)
    assert after.metrics.turns == before.metrics.turns + 1
    assert after.metrics.messages == before.metrics.messages + 2
    assert after.metrics.tokens == before.metrics.tokens + 10 + 100 + 1000 + 5
    assert after.context.used_tokens == 10 + 100 + 1000  # the input side of the call
    assert after.last_interacted_at.isoformat() == "2026-02-18T09:00:05+00:00"
    assert after.title == before.title
    assert after.metrics.bytes == path.stat().st_size


async def test_truncated_file_is_read_again(orch: AgentOrchestrator, realdata: Homes) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    path = _claude(realdata)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:10]))

    report = await orch.import_sources(realdata.claude, realdata.codex)

    assert (report.files_read, report.files_rewritten) == (1, 1)
    assert report.bytes_read == path.stat().st_size
    fresh = await orch.get_session(CLAUDE_ID)
    # A clean import of the same ten lines gives the same figures.
    other = await AgentOrchestrator.open(path.parents[4] / "other-data")
    try:
        await other.import_sources(realdata.claude, realdata.codex)
        clean = await other.get_session(CLAUDE_ID)
    finally:
        await other.close()
    assert fresh.metrics == clean.metrics
    assert fresh.context == clean.context


async def test_rewritten_prefix_is_read_again_even_when_it_grew(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = write(
        empty_homes.projects / "-work-app" / f"{SESSION}.jsonl",
        user("u1", "first version of the prompt"),
        assistant("a1", "reply", "m1"),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    # Same session file written anew (e.g. restored from a backup) with more lines.
    write(
        path,
        user("u1", "second version of the prompt"),
        assistant("a1", "reply", "m1"),
        user("u2", "and more", "2026-03-01T10:01:00.000Z"),
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert (report.files_read, report.files_rewritten) == (1, 1)
    session = await orch.get_session(SESSION)
    assert session.title == "second version of the prompt"
    assert (session.metrics.turns, session.metrics.messages) == (2, 3)


async def test_torn_last_line_waits_for_its_newline(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = write(
        empty_homes.projects / "-work-app" / f"{SESSION}.jsonl",
        user("u1", "hello"),
        assistant("a1", "hi", "m1"),
    )
    whole = line(user("u2", "a prompt being written", "2026-03-01T10:05:00.000Z"))
    append(path, whole[:25])  # a writer mid-append

    first = await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert first.malformed_lines == 0
    assert (await orch.get_session(SESSION)).metrics.messages == 2

    unchanged = await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert unchanged.bytes_read == 0

    append(path, whole[25:])
    done = await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert done.malformed_lines == 0
    assert done.bytes_read == len(whole)  # the torn line is read again, whole
    session = await orch.get_session(SESSION)
    assert (session.metrics.turns, session.metrics.messages) == (2, 3)


async def test_purged_sessions_stay_purged(orch: AgentOrchestrator, realdata: Homes) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    await orch.dismiss(CLAUDE_ID)
    await orch.purge(CLAUDE_ID)
    append(_claude(realdata), line(user("u-late", "still there?", "2026-02-18T09:00:00.000Z")))

    report = await orch.import_sources(realdata.claude, realdata.codex)

    assert report.files_read == 1
    assert report.sessions_skipped_dismissed == 1
    assert report.sessions_added == 0
    assert CLAUDE_ID not in {s.conversation_id for s in (await orch.list_sessions(100)).sessions}
    # A store built from scratch would import it; only the tombstone keeps it out.
    fresh = await orch.import_sources(realdata.claude, realdata.codex)
    assert fresh.sessions_added == 0


async def test_a_running_session_is_never_overwritten(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    running = finished(CLAUDE_ID, 1_700_000_000_000_000, state=SessionState.RUNNING)
    await orch.store.bulk.insert([running])
    before = query(data_dir, "SELECT * FROM sessions WHERE conversation_id = ?", (CLAUDE_ID,))

    report = await orch.import_sources(realdata.claude, realdata.codex)

    assert report.sessions_skipped_busy == 1
    assert report.sessions_added == 21
    after = query(data_dir, "SELECT * FROM sessions WHERE conversation_id = ?", (CLAUDE_ID,))
    assert after == before


async def test_a_session_delegate_launched_is_updated_not_duplicated(
    orch: AgentOrchestrator, realdata: Homes, data_dir: Path
) -> None:
    # As if delegate had launched it through the real CLI with --session-id.
    ours = finished(CLAUDE_ID, 1_700_000_000_000_000, messages=0)
    await orch.store.bulk.insert([ours])

    report = await orch.import_sources(realdata.claude, realdata.codex)

    assert (report.sessions_added, report.sessions_updated) == (21, 1)
    rows = query(
        data_dir,
        "SELECT source, agent_id, state, title, turns, message_count FROM sessions"
        " WHERE conversation_id = ?",
        (CLAUDE_ID,),
    )
    assert rows == [("delegate", "echo", "idle", f"session {CLAUDE_ID}", 9, 27)]
    # Its messages now come from the transcript (we stored none).
    page = await orch.recent_messages(CLAUDE_ID, 2)
    assert len(page.messages) == 2


async def test_files_are_committed_newest_first(orch: AgentOrchestrator, realdata: Homes) -> None:
    seen: list[int] = []
    for i, path in enumerate(sorted(realdata.projects.rglob("*.jsonl"))):
        os.utime(path, ns=(1_800_000_000_000_000_000 + i, 1_800_000_000_000_000_000 + i))
    newest = sorted(realdata.projects.rglob("*.jsonl"))[-1]

    await orch.import_sources(realdata.claude, realdata.codex, lambda p: seen.append(p.files_done))

    rows = query(
        orch.store.path.parent,
        "SELECT path FROM source_files ORDER BY rowid LIMIT 1",
    )
    assert rows == [(str(newest),)]
    assert seen[0] == 0
    assert seen[-1] == 24
