"""The listing pass: every new session's row from its file's head and tail, first."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest
from source_homes import REALDATA, Homes
from sources_support import SESSION, assistant, line, user

from core.importing import importer
from core.importing.report import ImportProgress
from core.models import SessionScope
from core.orchestrator import AgentOrchestrator
from core.sources import claude, listing
from core.sources import files as discovery
from core.sources.worker import FileTask, parse_file
from tui.cli import main

LISTED_FACTS = (
    "conversation_id",
    "source",
    "agent_id",
    "cwd",
    "git_branch",
    "title",
    "strong_title",
    "parent_id",
    "created_us",
    "last_us",
    "model",
    "context_tokens",
    "context_limit",
    "context_known",
    "warmup",
)
"""What a row shows before its file is read in full: exact from the head and tail."""


def _tasks(claude_dir: Path, codex_dir: Path) -> list[FileTask]:
    found = discovery.Discovery()
    discovery.discover_claude(claude_dir, found)
    discovery.discover_codex(codex_dir, found)
    return [importer.read_task(f) for f in found.files]


def _us(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1_000_000)


def _claude_task(path: Path) -> FileTask:
    st = path.stat()
    return FileTask(str(path), claude.SOURCE, st.st_size, st.st_mtime_ns, path.stem)


def test_every_real_transcript_lists_as_its_full_read_does() -> None:
    tasks = _tasks(REALDATA / "claude", REALDATA / "codex")
    assert {t.source for t in tasks} == {"claude-code", "codex"}
    assert any(t.subagent for t in tasks)
    for task in tasks:
        sketch, full = listing.sketch_file(task), parse_file(task)
        assert (sketch.facts is None) == (full.facts is None), task.path
        if sketch.facts is None or full.facts is None:
            continue
        for name in LISTED_FACTS:
            assert getattr(sketch.facts, name) == getattr(full.facts, name), (task.path, name)
        assert sketch.bytes_read <= listing.HEAD_MAX_BYTES + listing.TAIL_MAX_BYTES


def test_a_long_transcript_is_listed_from_bounded_reads(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    middle = b"".join(
        line(assistant(f"a{i}", "x" * 2000, f"msg_{i}", "2026-03-01T10:05:00.000Z"))
        for i in range(2000)
    )
    path.write_bytes(
        line(user("u1", "Plan the migration"))
        + middle
        + line(user("u2", "And the rollback?", "2026-03-02T08:00:00.000Z"))
        + line(assistant("a-last", "Done", "msg_last", "2026-03-02T08:00:09.000Z")),
    )

    sketch = listing.sketch_file(_claude_task(path))

    assert path.stat().st_size > 4_000_000
    assert sketch.bytes_read <= listing.HEAD_MAX_BYTES + listing.TAIL_MAX_BYTES
    assert sketch.facts is not None
    assert sketch.facts.title == "Plan the migration"
    assert sketch.facts.last_us == _us("2026-03-02T08:00:09+00:00")  # the last line's
    assert sketch.facts.turns == 2  # only the lines read: the full read counts the rest


def test_one_long_last_line_leaves_the_last_activity_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    huge = assistant("a-huge", "y" * (3 * listing.TAIL_MAX_BYTES), "msg_h", "2026-03-05T00:00:00Z")
    path.write_bytes(line(user("u1", "Summarise the logs")) + line(huge))
    os.utime(path, ns=(1_780_000_000_000_000_000, 1_780_000_000_000_000_000))

    sketch = listing.sketch_file(_claude_task(path))

    assert sketch.facts is not None
    assert sketch.facts.title == "Summarise the logs"
    assert sketch.facts.last_us == 1_780_000_000_000_000  # the file's last write
    assert sketch.bytes_read <= listing.HEAD_MAX_BYTES + listing.TAIL_MAX_BYTES


def test_bad_lines_and_a_torn_last_line_are_passed_over(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(
        b"not json\n[1, 2]\n\n"
        + line(user("u1", "Fix the flaky test"))
        + b'{"type": "user", "message": {"content": "half wri'
    )

    sketch = listing.sketch_file(_claude_task(path))

    assert sketch.error is None
    assert sketch.facts is not None
    assert sketch.facts.title == "Fix the flaky test"
    assert sketch.facts.turns == 1


def test_a_fifo_named_like_a_transcript_is_not_opened(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    os.mkfifo(path)
    task = FileTask(str(path), claude.SOURCE, 0, 0, SESSION)

    (result,) = listing.sketch_batch([task])

    assert result.facts is None
    assert result.error is not None


def _rows(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in r.items() if k != "change_seq"} for r in rows]


async def _session_rows(orch: AgentOrchestrator) -> list[dict[str, object]]:
    rows = await orch.store.db.fetch_all("SELECT * FROM sessions ORDER BY conversation_id")
    return _rows([dict(r) for r in rows])


async def _search_rows(orch: AgentOrchestrator) -> list[tuple[object, ...]]:
    """What full-content search finds, without the rows' own ids."""
    rows = await orch.store.db.fetch_all(
        "SELECT conversation_id, origin, kind, at, body, marks FROM search_docs"
        " ORDER BY conversation_id, origin, kind, at, body"
    )
    assert rows  # titles, prompts and replies
    return [tuple(r) for r in rows]


async def test_a_listed_import_ends_as_an_import_that_reads_every_file_first(
    orch: AgentOrchestrator, realdata: Homes, tmp_path: Path
) -> None:
    phases: list[ImportProgress] = []
    listed = await orch.import_sources(
        realdata.claude, realdata.codex, phases.append, workers=0, list_first_bytes=0
    )
    other = await AgentOrchestrator.open(tmp_path / "other-data")
    try:
        unlisted = await other.import_sources(
            realdata.claude, realdata.codex, workers=0, list_first_bytes=1 << 62
        )
        assert await _session_rows(orch) == await _session_rows(other)
        assert await _search_rows(orch) == await _search_rows(other)
        for words in ("the", "test*", "claude"):
            ours, theirs = await orch.search_sessions(words), await other.search_sessions(words)
            assert ours.results  # the full-content index answers as the other does
            assert [r.session.conversation_id for r in ours.results] == [
                r.session.conversation_id for r in theirs.results
            ]
    finally:
        await other.close(wait=False)

    assert listed.listing_s is not None
    assert unlisted.listing_s is None
    assert listed.listing_s <= listed.duration_s
    assert listed.sessions_added == unlisted.sessions_added > 0
    assert listed.sessions_listed == listed.sessions_added
    assert listed.sessions_updated == unlisted.sessions_updated == 0
    kinds = [p.phase for p in phases]
    assert kinds.index("listing") < kinds.index("reading")
    last_listing = [p for p in phases if p.phase == "listing"][-1]
    assert last_listing.files_done == last_listing.files_total == listed.files_read
    assert last_listing.sessions_listed == listed.sessions_added


async def _counting(orch: AgentOrchestrator) -> list[bool]:
    """Whether each stored session is still being counted (listed, not read in full)."""
    page = await orch.list_sessions(100, scope=SessionScope(top_level=False, warmup=True))
    assert page.next_cursor is None
    return [s.counting for s in page.sessions]


class _StopAfterListing(Exception):
    pass


async def test_an_import_stopped_after_listing_reads_every_listed_file_next_time(
    orch: AgentOrchestrator, realdata: Homes, tmp_path: Path
) -> None:
    _many_sessions(realdata, 40)  # more files than the first batch reads in full

    def stop_at_the_full_read(update: ImportProgress) -> None:
        if update.phase == "reading":
            raise _StopAfterListing

    with pytest.raises(_StopAfterListing):
        await orch.import_sources(
            realdata.claude, realdata.codex, stop_at_the_full_read, workers=0, list_first_bytes=0
        )
    page = await orch.list_sessions()
    assert page.sessions  # listed: on the panel before any file was read in full
    any_id = page.sessions[-1].conversation_id
    assert await orch.store.imports.transcript_for(any_id) is not None  # a preview finds it
    counting = await _counting(orch)
    first_batch = 24  # read in full before the stop (importer.FIRST_BATCH_FILES)
    assert counting.count(True) >= len(counting) - first_batch > 0
    found = await orch.search_sessions("Question", 50)  # the titles are searchable
    assert len(found.results) == 40
    assert any(r.session.counting for r in found.results)

    again = await orch.import_sources(realdata.claude, realdata.codex, workers=0)
    assert True not in await _counting(orch)

    assert again.files_rewritten == 0
    other = await AgentOrchestrator.open(tmp_path / "other-data")
    try:
        full = await other.import_sources(realdata.claude, realdata.codex, workers=0)
        assert await _session_rows(orch) == await _session_rows(other)
        assert again.files_read + full.files_read > 0
    finally:
        await other.close(wait=False)
    rescan = await orch.import_sources(realdata.claude, realdata.codex, workers=0)
    assert rescan.files_read == 0  # nothing is left marked for reading


async def test_a_dismissed_session_is_not_listed_again(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex, workers=0)
    page = await orch.list_sessions()
    gone = page.sessions[0].conversation_id
    await orch.purge(gone, force=True, with_dependants=True)
    async with orch.store.db.transaction() as db:
        await db.execute("DELETE FROM source_files")  # every file as if never read

    report = await orch.import_sources(
        realdata.claude, realdata.codex, workers=0, list_first_bytes=0
    )

    assert report.sessions_skipped_dismissed >= 1
    sql = "SELECT 1 FROM sessions WHERE conversation_id = ?"
    assert await orch.store.db.fetch_all(sql, (gone,)) == []


def _many_sessions(homes: Homes, count: int) -> None:
    """``count`` small Claude Code sessions with their own ids and times."""
    for i in range(count):
        session = f"{i:08x}-2222-4333-8444-555555555555"
        day = f"2026-03-{1 + i % 28:02d}"
        lines = [
            {**user(f"u{i}", f"Question {i}", f"{day}T10:00:00.000Z"), "sessionId": session},
            {
                **assistant(f"a{i}", f"Answer {i}", f"msg_{i}", f"{day}T10:00:05.000Z"),
                "sessionId": session,
            },
        ]
        path = homes.claude_file("-work-app", f"{session}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(line(o) for o in lines))


async def test_worker_processes_list_and_read_as_one_thread_does(
    orch: AgentOrchestrator, empty_homes: Homes, tmp_path: Path
) -> None:
    _many_sessions(empty_homes, 60)  # more than one batch: the pool is used

    pooled = await orch.import_sources(
        empty_homes.claude, empty_homes.codex, workers=2, list_first_bytes=0
    )
    other = await AgentOrchestrator.open(tmp_path / "other-data")
    try:
        threaded = await other.import_sources(
            empty_homes.claude, empty_homes.codex, workers=0, list_first_bytes=1 << 62
        )
        assert await _session_rows(orch) == await _session_rows(other)
    finally:
        await other.close(wait=False)

    assert pooled.workers == 2
    assert pooled.sessions_listed == pooled.sessions_added == threaded.sessions_added == 60


def test_a_session_whose_id_its_agent_never_mints_is_not_listed(tmp_path: Path) -> None:
    path = tmp_path / "--dangerously-skip-permissions.jsonl"
    path.write_bytes(line(user("u1", "Looks like a session")))

    sketch = listing.sketch_file(_claude_task(path))

    assert sketch.facts is None
    assert sketch.invalid_id == "--dangerously-skip-permissions"


def test_the_import_command_says_when_every_session_was_listed(
    realdata: Homes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = realdata.claude_file("-work-big", f"{SESSION}.jsonl")  # past the default threshold
    big.parent.mkdir(parents=True)
    reply = line(assistant("a1", "z" * 64_000, "msg_1", "2026-03-01T10:00:05.000Z"))
    big.write_bytes(line(user("u1", "Read the whole log")) + reply * 530)
    assert big.stat().st_size > importer.LIST_FIRST_BYTES
    args = ["--data-dir", str(tmp_path / "data"), "import"]
    args += ["--claude-dir", str(realdata.claude), "--codex-dir", str(realdata.codex)]

    assert main(args) == 0

    out = capsys.readouterr().out
    assert "every new session listed in " in out
    assert "from its file's first and last lines, then each file read in full" in out
    assert main([*args, "--report", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions_listed"] == report["sessions_added"] > 1
    assert 0 < report["listing_s"] <= report["duration_s"]
