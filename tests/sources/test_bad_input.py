"""Broken input is skipped and counted per file; nothing aborts the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from source_homes import Homes
from sources_support import SESSION, assistant, line, user, write
from support import query

from core.orchestrator import AgentOrchestrator

GOOD = "99999999-0000-0000-0000-000000000001"


def _project(homes: Homes) -> Path:
    return homes.projects / "-work-app"


async def test_bad_lines_are_counted_and_the_rest_imported(
    orch: AgentOrchestrator, empty_homes: Homes, data_dir: Path
) -> None:
    path = _project(empty_homes) / f"{SESSION}.jsonl"
    path.write_bytes(
        line(user("u1", "a good prompt"))
        + b'{"type": "user", "message": {broken json\n'  # malformed
        + b'{"type":"brand-new-line-type","timestamp":"2026-03-01T10:00:00Z"}\n'  # unknown type
        + b'{"type":"user","message":{"role":"user","content":"caf\xe9"}}\n'  # invalid UTF-8
        + b"[1, 2, 3]\n"  # JSON, but not an object
        + b'{"type":"user","message":{"content":"'
        + b"x" * (50 * 1024 * 1024)
        + b'"}}\n'
        + line(assistant("a1", "a good reply", "m1"))
    )
    write(_project(empty_homes) / f"{GOOD}.jsonl", user("g1", "another session"))
    (_project(empty_homes) / "00000000-0000-0000-0000-00000000000e.jsonl").write_bytes(b"")

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert (report.malformed_lines, report.unknown_lines, report.oversized_lines) == (3, 1, 1)
    assert report.files_without_session == 1  # the empty file
    assert report.sessions_added == 2
    session = await orch.get_session(SESSION)
    assert (session.metrics.turns, session.metrics.messages) == (1, 2)
    assert session.title == "a good prompt"
    assert [
        (f.path, f.malformed_lines, f.unknown_lines, f.oversized_lines)
        for f in report.files_with_skips
    ] == [(str(path), 3, 1, 1)]
    assert report.files_with_skips_total == 1
    assert report.problem_line == "1 file has skipped lines — see `delegate import --report`"
    # Counted once: an unchanged re-scan reports no new skips, the index keeps them.
    again = await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert (again.malformed_lines, again.unknown_lines, again.oversized_lines) == (0, 0, 0)
    assert again.files_with_skips_total == 1
    rows = query(
        data_dir,
        "SELECT malformed_lines, unknown_lines, oversized_lines FROM source_files WHERE path = ?",
        (str(path),),
    )
    assert rows == [(3, 1, 1)]


async def test_codex_bad_lines(orch: AgentOrchestrator, empty_homes: Homes) -> None:
    folder = empty_homes.codex / "archived_sessions"
    folder.mkdir()
    sid = "019c0000-0000-7000-8000-000000000001"
    (folder / f"rollout-2026-03-01T10-00-00-{sid}.jsonl").write_bytes(
        b'{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"'
        + sid.encode()
        + b'","cwd":"/w","git":{"branch":"dev"}}}\n'
        b'{"timestamp":"2026-03-01T10:00:01Z","type":"mystery","payload":{}}\n'
        b"not json at all\n"
        b'{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg",'
        b'"payload":{"type":"user_message","message":"fix it"}}\n'
        b'{"timestamp":"2026-03-01T10:00:03Z","type":"event_msg",'
        b'"payload":{"type":"token_count","info":null}}\n'
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert (report.malformed_lines, report.unknown_lines) == (1, 1)
    session = await orch.get_session(sid)
    assert (session.title, session.git_branch, session.cwd) == ("fix it", "dev", "/w")
    assert session.context.used_tokens == 0


async def test_unreadable_files_are_listed_with_the_reason(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(_project(empty_homes) / f"{GOOD}.jsonl", user("g1", "a readable session"))
    loop = _project(empty_homes) / "22222222-0000-0000-0000-000000000000.jsonl"
    loop.symlink_to(loop)  # unreadable even for root: a symlink to itself

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert [(u.path, u.reason) for u in report.unreadable] == [
        (str(loop), "Too many levels of symbolic links")
    ]
    assert report.sessions_added == 1
    assert report.problem_line == "1 file unreadable — see `delegate import --report`"
    last = await orch.last_import_report()
    assert last is not None
    assert last.unreadable == report.unreadable


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
async def test_a_file_without_read_permission(orch: AgentOrchestrator, empty_homes: Homes) -> None:
    path = write(_project(empty_homes) / f"{SESSION}.jsonl", user("u1", "secret"))
    path.chmod(0o000)
    try:
        report = await orch.import_sources(empty_homes.claude, empty_homes.codex)
        assert [(u.path, u.reason) for u in report.unreadable] == [(str(path), "Permission denied")]
        # It is tried again on the next scan, and imported once readable.
        path.chmod(0o644)
        again = await orch.import_sources(empty_homes.claude, empty_homes.codex)
        assert again.sessions_added == 1
    finally:
        path.chmod(0o644)


async def test_missing_folders_are_fine(orch: AgentOrchestrator, tmp_path: Path) -> None:
    report = await orch.import_sources(tmp_path / "no-claude", tmp_path / "no-codex")
    assert (report.files_seen, report.sessions_added, report.unreadable) == (0, 0, [])
