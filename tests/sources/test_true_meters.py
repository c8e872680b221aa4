"""True context figures of imported transcripts: what is in use, the model and its window,
the estimate after a compaction, and the per-turn samples (the trend)."""

from __future__ import annotations

import json
from pathlib import Path

from source_homes import REALDATA, Homes
from sources_support import SESSION, append, assistant, envelope, line, user, write
from support import write_config

from core.models import WindowSource
from core.orchestrator import AgentOrchestrator

COMPACTED_ROLLOUT = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
BEFORE_COMPACTION, AFTER_COMPACTION, LAST_MEASURED = 209_950, 48_297, 162_073
FIRST_MEASURED = 17_088  # the rollout's first token count: instructions and first prompt


def _compaction(summary: str) -> list[dict[str, object]]:
    boundary = envelope(
        "system",
        "c-b",
        "2026-03-01T10:05:00.000Z",
        subtype="compact_boundary",
        compactMetadata={"trigger": "auto", "preTokens": 150_000},
    )
    return [boundary, user("c-s", summary, "2026-03-01T10:05:01.000Z", isCompactSummary=True)]


async def test_claude_context_is_the_input_side_of_the_latest_call_on_its_models_window(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        assistant("a1", "hi", "m1", usage=(10, 100, 1000, 5)),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    session = await orch.get_session(SESSION)
    context = session.context
    # input + cache creation + cache read; the 5 output tokens are not context yet.
    assert context.used_tokens == 1_110
    assert session.metrics.tokens == 1_115
    assert (context.model, context.limit_tokens, context.window_source) == (
        "claude-sonnet-4-5",
        200_000,
        WindowSource.MODEL,
    )


async def test_a_claude_session_past_200k_runs_the_1m_variant(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    write(
        empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
        user("u1", "hello"),
        assistant("a1", "hi", "m1", usage=(10, 0, 300_000, 5)),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(SESSION)).context
    assert (context.model, context.limit_tokens, context.window_source) == (
        "claude-sonnet-4-5[1m]",
        1_000_000,
        WindowSource.MODEL,
    )


async def test_the_configured_windows_table_reaches_imported_sessions(
    tmp_path: Path, empty_homes: Homes
) -> None:
    data = write_config(
        tmp_path / "cfg", '\n[context]\nwindows = { "claude-sonnet-4-5" = 64000 }\n'
    )
    orch = await AgentOrchestrator.open(data)
    try:
        write(
            empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"),
            user("u1", "hello"),
            assistant("a1", "hi", "m1", usage=(10, 0, 32_000, 5)),
        )
        await orch.import_sources(empty_homes.claude, empty_homes.codex)
        context = (await orch.get_session(SESSION)).context
        assert (context.limit_tokens, context.window_source) == (64_000, WindowSource.MODEL)
        assert context.percent == 50.015625
    finally:
        await orch.close(wait=False)


async def test_after_a_claude_compaction_the_estimate_is_summary_plus_system_prompt(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = empty_homes.claude_file("-work-app", f"{SESSION}.jsonl")
    summary = "The summary of what happened so far. " * 200  # 7,400 characters
    write(
        path,
        user("u1", "hello"),
        assistant("a1", "hi", "m1", usage=(0, 20_000, 0, 5)),  # system prompt + "hello"
        user("u2", "go on", "2026-03-01T10:01:00.000Z"),
        assistant("a2", "more", "m2", "2026-03-01T10:01:01.000Z", usage=(0, 0, 150_000, 5)),
        *_compaction(summary),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    context = (await orch.get_session(SESSION)).context
    assert context.estimated is True
    # About 20k of system prompt and 1.85k of summary: not the 150k before, nor the
    # summary alone.
    assert 20_000 < context.used_tokens < 23_000

    append(path, line(assistant("a3", "again", "m3", usage=(10, 0, 25_000, 5))))
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    context = (await orch.get_session(SESSION)).context
    assert (context.estimated, context.used_tokens) == (False, 25_010)


async def test_claude_samples_keep_one_figure_per_turn_and_the_rate(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = empty_homes.claude_file("-work-app", f"{SESSION}.jsonl")
    lines = []
    for turn in range(1, 5):
        ts = f"2026-03-01T10:0{turn}:00.000Z"
        lines += [
            user(f"u{turn}", f"prompt {turn}", ts),
            assistant(f"a{turn}", "ok", f"m{turn}", ts, usage=(0, 0, 10_000 * turn, 5)),
        ]
    write(path, *lines)
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    report = await orch.context_report(SESSION)
    assert report.trend == (10_000, 20_000, 30_000, 40_000)
    assert report.session.context.tokens_per_turn == 10_000
    assert report.session.context.turns_left == 16

    # The file grows: the next import adds the new turn's figure.
    append(
        path,
        line(user("u5", "prompt 5", "2026-03-01T10:06:00.000Z"))
        + line(assistant("a5", "ok", "m5", "2026-03-01T10:06:01.000Z", usage=(0, 0, 52_000, 5))),
    )
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    report = await orch.context_report(SESSION)
    assert report.trend[-2:] == (40_000, 52_000)
    assert report.session.context.tokens_per_turn == 10_500


async def test_codex_figures_on_the_real_compacted_rollout(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    [source] = (REALDATA / "codex").rglob(f"rollout-*-{COMPACTED_ROLLOUT}.jsonl")
    lines = source.read_text().splitlines(keepends=True)
    cut = next(i for i, text in enumerate(lines) if json.loads(text)["type"] == "compacted")
    target = empty_homes.codex / "sessions" / "2026" / "02" / "23" / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines[: cut + 2]))  # up to the compaction, no usage since

    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    context = (await orch.get_session(COMPACTED_ROLLOUT)).context
    assert (context.model, context.limit_tokens, context.window_source) == (
        "gpt-5.3-codex",
        258_400,
        WindowSource.RECORDED,
    )
    assert context.estimated is True
    # The instructions the first call carried and the summary with the history kept:
    # far below the 210k before, never below the first call.
    assert FIRST_MEASURED < context.used_tokens < BEFORE_COMPACTION // 4

    target.write_text("".join(lines))
    await orch.import_sources(empty_homes.claude, empty_homes.codex)
    report = await orch.context_report(COMPACTED_ROLLOUT)
    context = report.session.context
    assert (context.estimated, context.used_tokens) == (False, LAST_MEASURED)
    assert report.trend[-1] == LAST_MEASURED
    assert 1 < len(report.trend) <= 20
    assert context.tokens_per_turn > 0
