"""What the import says about line types it does not know, and how sure a meter is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from source_homes import Homes
from sources_support import SESSION, assistant, envelope, user, write

from core.orchestrator import AgentOrchestrator
from tui.cli import main

CODEX_ID = "019c8a53-a0dd-7130-bcd7-95445d84846a"


def _odd(kind: str, version: str = "2.3.0", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "version": version, "sessionId": SESSION, **extra}


def _compaction(uuid: str, summary: str) -> list[dict[str, Any]]:
    boundary = envelope(
        "system",
        f"{uuid}-b",
        "2026-03-01T10:05:00.000Z",
        subtype="compact_boundary",
        compactMetadata={"trigger": "auto", "preTokens": 150_000},
    )
    summary_line = user(f"{uuid}-s", summary, "2026-03-01T10:05:01.000Z", isCompactSummary=True)
    return [boundary, summary_line]


def _codex(path: Path, *lines: dict[str, Any]) -> Path:
    meta = {
        "timestamp": "2026-03-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": CODEX_ID, "cwd": "/work/app", "cli_version": "0.200.0"},
    }
    prompt = {
        "timestamp": "2026-03-01T10:00:01.000Z",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "hello"},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in (meta, prompt, *lines)))
    return path


def _tokens(used: int, window: int = 258_400) -> dict[str, Any]:
    info = {
        "total_token_usage": {"total_tokens": used},
        "last_token_usage": {"input_tokens": used},
        "model_context_window": window,
    }
    return {
        "timestamp": "2026-03-01T10:00:02.000Z",
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info},
    }


def _codex_path(homes: Homes) -> Path:
    return (
        homes.codex
        / "sessions"
        / "2026"
        / "03"
        / "01"
        / f"rollout-2026-03-01T10-00-00-{CODEX_ID}.jsonl"
    )


# --- line types ------------------------------------------------------------


async def test_unknown_line_types_are_reported_by_name_and_version(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        _odd("hologram"),
        _odd("hologram"),
        _odd("teleport", version="2.4.1"),
    )
    _codex(
        _codex_path(empty_homes), {"timestamp": "2026-03-01T10:00:03.000Z", "type": "rollout_v2"}
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert report.unknown_lines == 4
    found = {(t.source, t.type, t.version, t.lines) for t in report.unknown_types}
    assert found == {
        ("claude-code", "hologram", "2.3.0", 2),
        ("claude-code", "teleport", "2.4.1", 1),
        ("codex", "rollout_v2", "0.200.0", 1),
    }


async def test_types_that_carry_nothing_we_show_are_known_not_skipped(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        _odd("ai-title", aiTitle="A title Claude Code chose"),
        _odd("mode", mode="default"),
        _odd("pr-link", prNumber=13),
        _odd("worktree-state"),
        _odd("file-history-delta"),
        _odd("agent-setting"),
    )

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert report.unknown_lines == 0
    assert report.unknown_types == []
    assert report.files_with_skips_total == 0


def test_the_cli_report_names_the_unknown_types(
    empty_homes: Homes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        _odd("hologram\x1b[31m"),  # a name from disk is shown, never obeyed
    )
    data = str(tmp_path / "cli-data")
    args = ["--data-dir", data, "import", "--claude-dir", str(empty_homes.claude)]
    assert main([*args, "--codex-dir", str(empty_homes.codex)]) == 0
    capsys.readouterr()

    assert main(["--data-dir", data, "import", "--report"]) == 0

    out = capsys.readouterr().out
    assert "unknown line type" in out
    assert "hologram" in out
    assert "2.3.0" in out
    assert "\x1b" not in out


# --- meters ----------------------------------------------------------------


async def test_a_claude_session_without_usage_is_unknown_not_empty(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), user("u1", "hello"))

    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(SESSION)).context
    assert context.known is False
    assert context.estimated is False


async def test_after_a_compaction_the_figure_is_an_estimate_until_new_usage(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = empty_homes.claude_file("-work-app", f"{SESSION}.jsonl")
    summary = "The summary of what happened so far. " * 200  # about 7,400 characters
    write(
        path,
        user("u1", "hello"),
        assistant("a1", "hi", "m1", usage=(0, 12_000, 0, 5)),  # the system prompt and "hello"
        user("u2", "go on", "2026-03-01T10:01:00.000Z"),
        assistant("a2", "hi", "m2", "2026-03-01T10:01:01.000Z", usage=(10, 0, 150_000, 5)),
        *_compaction("c1", summary),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(SESSION)).context
    assert context.known is True
    assert context.estimated is True
    # Not the 150k before the compaction: the system prompt and the summary's size.
    assert 12_000 + 1_000 < context.used_tokens < 12_000 + 5_000

    with path.open("a") as f:
        f.write(json.dumps(assistant("a2", "again", "m2", usage=(10, 0, 9_000, 5))) + "\n")
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(SESSION)).context
    assert context.estimated is False
    assert context.used_tokens == 9_010


async def test_a_codex_rollout_without_token_counts_is_unknown(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    _codex(_codex_path(empty_homes))

    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    assert (await orch.get_session(CODEX_ID)).context.known is False


async def test_a_codex_compaction_makes_the_figure_an_estimate(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    compacted = {
        "timestamp": "2026-03-01T10:00:04.000Z",
        "type": "compacted",
        "payload": {"message": "Summary so far. " * 400},
    }
    again = {
        "timestamp": "2026-03-01T10:00:03.000Z",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "go on"},
    }
    _codex(_codex_path(empty_homes), _tokens(15_000), again, _tokens(200_000), compacted)

    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(CODEX_ID)).context
    assert (context.known, context.estimated) == (True, True)
    # The first request's context (instructions) and about the summary's 6,400 characters.
    assert 15_000 < context.used_tokens < 15_000 + 2_000
