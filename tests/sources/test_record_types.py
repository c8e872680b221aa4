"""Record types: what the pinned agents write is known; a new type is named, never damage.

"N files have skipped lines" is said only for real damage (lines that are not JSON,
too long, or a known record broken). A record of a type the importer does not know
(a newer agent release) is counted apart, by its name and the version that wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from source_homes import Homes
from sources_support import SESSION, envelope, line, user, write

from core.orchestrator import AgentOrchestrator
from core.sources import claude, codex
from tui.cli import main

CODEX_ID = "019c8a53-a0dd-7130-bcd7-95445d84846a"


def _claude_record(kind: str, version: str = claude.KNOWN_TYPES_VERSION) -> dict[str, Any]:
    return {"type": kind, "version": version, "sessionId": SESSION}


def _rollout(homes: Homes, *lines: dict[str, Any], version: str = "0.169.0") -> Path:
    meta = {
        "timestamp": "2026-03-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": CODEX_ID, "cwd": "/work/app", "cli_version": version},
    }
    prompt = _event("user_message", message="hello")
    path = (
        homes.codex / "sessions" / "2026" / "03" / "01" / f"rollout-2026-03-01T10-00-00-{CODEX_ID}"
    )
    return write(path.with_suffix(".jsonl"), meta, prompt, *lines)


def _event(sub: str, **payload: Any) -> dict[str, Any]:
    return {
        "timestamp": "2026-03-01T10:00:01.000Z",
        "type": "event_msg",
        "payload": {"type": sub, **payload},
    }


def _item(sub: str) -> dict[str, Any]:
    return {
        "timestamp": "2026-03-01T10:00:01.000Z",
        "type": "response_item",
        "payload": {"type": sub},
    }


# --- what the pinned releases write is known --------------------------------


async def test_every_record_type_claude_code_2_1_328_writes_is_known(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    """Types the real 2.1.328 wrote for a plain turn, a resume and a /compact."""
    written = ["api-request", "api-request-blob", "api-request-shape", "atis-latch", "cost-state"]
    written += ["attachment", "last-prompt", "mode", "queue-operation"]
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        *(_claude_record(kind) for kind in written),
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert report.unknown_types == []
    assert report.unknown_lines == 0
    assert report.files_with_skips_total == 0
    assert report.problem_line is None


async def test_every_record_type_codex_0_169_writes_is_known(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    """Types the real 0.169.0 wrote for exec, resume and an automatic compaction."""
    _rollout(
        empty_homes,
        {"timestamp": "2026-03-01T10:00:01.000Z", "type": "world_state", "payload": {"full": True}},
        {"timestamp": "2026-03-01T10:00:01.000Z", "type": "token_usage_record", "payload": {}},
        _event("thread_settings_applied"),
        _event("item_completed"),
        _event("task_started"),
        _event("task_complete"),
        _item("message"),
        _item("tool_search_call"),
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert report.unknown_types == []
    assert report.problem_line is None


def test_the_known_lists_say_which_release_they_were_taken_from() -> None:
    assert claude.KNOWN_TYPES_VERSION == "2.1.328"
    assert codex.KNOWN_TYPES_VERSION == "0.169.0"


# --- an unknown type is named, not damage ----------------------------------


async def test_an_unknown_claude_type_is_named_with_its_version_not_damage(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        *(_claude_record("foo", "2.1.400") for _ in range(3)),
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert [(t.source, t.type, t.version, t.lines) for t in report.unknown_types] == [
        ("claude-code", "foo", "2.1.400", 3)
    ]
    assert report.malformed_lines == 0
    assert report.files_damaged_total == 0
    assert report.problem_line is None  # no "N files have skipped lines"
    assert report.unknown_line == (
        "3 records of unknown type `foo` from Claude Code 2.1.400 — see `delegate import --report`"
    )
    stored = await orch.last_import_report()
    assert stored is not None
    assert stored.unknown_line == report.unknown_line
    assert stored.problem_line is None


async def test_an_unknown_codex_event_is_named_with_the_rollouts_version(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    _rollout(empty_homes, _event("hologram_shown"), _item("hologram"), version="0.200.0")

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    found = {(t.source, t.type, t.version, t.lines) for t in report.unknown_types}
    assert found == {
        ("codex", "event_msg/hologram_shown", "0.200.0", 1),
        ("codex", "response_item/hologram", "0.200.0", 1),
    }
    assert report.problem_line is None
    assert report.unknown_line is not None
    assert "from Codex 0.200.0 and 1 more type" in report.unknown_line


async def test_damage_is_still_damage_beside_unknown_types(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = empty_homes.claude_file("-work-app", f"{SESSION}.jsonl")
    path.write_bytes(
        line(user("u1", "hello"))
        + line(_claude_record("foo", "2.1.400"))
        + b'{"type": "user", "message": {broken\n'  # not JSON: damage
        + line({"sessionId": SESSION, "version": "2.1.400"})  # no type at all: damage
        + line({"type": "", "sessionId": SESSION})  # an empty type: damage
        + line(envelope("assistant", "a1", "2026-03-01T10:00:02.000Z"))
    )
    _rollout(empty_homes, {"timestamp": "2026-03-01T10:00:02.000Z", "type": "event_msg"})

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    # The broken line, the typeless and the empty-typed ones, the payloadless event.
    assert report.malformed_lines == 4
    assert [(t.type, t.lines) for t in report.unknown_types] == [("foo", 1)]
    assert report.files_damaged_total == 2
    assert report.problem_line == "2 files have skipped lines — see `delegate import --report`"
    assert report.damage_line == "4 damaged lines skipped — see `delegate import --report`"


async def test_a_file_with_only_unknown_types_is_listed_but_not_damaged(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    """``--report`` still lists the file (with its unknown count); no warning is raised,
    on the next, unchanged scan either."""
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        _claude_record("foo", "2.1.400"),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    again = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert [(f.unknown_lines, f.malformed_lines) for f in again.files_with_skips] == [(1, 0)]
    assert again.files_damaged_total == 0
    assert again.problem_line is None


def test_delegate_import_says_unknown_types_apart_from_damage(
    empty_homes: Homes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        *(_claude_record("foo", "2.1.400") for _ in range(3)),
    )
    data = str(tmp_path / "cli-data")
    args = ["--data-dir", data, "import", "--claude-dir", str(empty_homes.claude)]

    assert main([*args, "--codex-dir", str(empty_homes.codex)]) == 0

    out = capsys.readouterr().out
    assert "3 records of unknown type foo from Claude Code 2.1.400" in out
    assert "skipped lines" not in out
    assert "damaged" not in out

    assert main([*args, "--codex-dir", str(empty_homes.codex), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files_damaged_total"] == 0
