"""Nothing stored can make reading fail (what is read, and what is stored).

Rows another program (or a newer delegate) wrote — timestamps outside the
datetime range, numbers beyond 64 bits, history events of a kind this version
does not know — are clamped or skipped and counted, never fatal.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from support import BASE_US, db_path, finished, json_out, run_cli

from core.clock import to_us
from core.orchestrator import AgentOrchestrator

# 9999-12-31T23:59:59-14:00 is 10000-01-01T13:59:59Z: past datetime.max.
YEAR_10000_US = 253402300799_000_000 + 14 * 3600 * 1_000_000
YEAR_1_US = to_us(datetime(1, 1, 1, tzinfo=UTC))


async def _store_with(data_dir: Path, *sessions: tuple[str, int]) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished(cid, at) for cid, at in sessions])
    finally:
        await orch.close()


async def test_out_of_range_timestamps_are_clamped_when_listed(
    data_dir: Path, tmp_path: Path
) -> None:
    await _store_with(
        data_dir, ("future", YEAR_10000_US), ("ancient", YEAR_1_US), ("plain", BASE_US)
    )
    result = run_cli("--data-dir", str(data_dir), "sessions", "list", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = json_out(result)["sessions"]
    assert [s["conversation_id"] for s in listed] == ["future", "plain", "ancient"]
    assert listed[0]["last_interacted_at"].startswith("9999-12-")
    assert listed[2]["last_interacted_at"].startswith("0001-01-")
    for args in (["sessions", "list"], ["sessions", "show", "future"], ["history"]):
        shown = run_cli("--data-dir", str(data_dir), *args, home=tmp_path)
        assert shown.returncode == 0, (args, shown.stderr)
        assert "Traceback" not in shown.stderr
    tool = run_cli(
        "--data-dir",
        str(data_dir),
        "tool",
        "delegate_sessions",
        '{"operation": "list", "limit": 5}',
        home=tmp_path,
    )
    assert tool.returncode == 0, tool.stderr
    assert len(json_out(tool)["sessions"]) == 3


async def test_numbers_beyond_64_bits_are_clamped_when_listed(
    data_dir: Path, tmp_path: Path
) -> None:
    await _store_with(data_dir, ("huge", BASE_US), ("plain", BASE_US - 1))
    # Another program wrote what no 64-bit integer holds (SQLite keeps it as REAL).
    with sqlite3.connect(db_path(data_dir)) as db:
        db.execute(
            "UPDATE sessions SET token_count = 1e30, context_tokens = 1e300,"
            " bytes_on_disk = -5, turns = 'many', created_at = 1e40"
            " WHERE conversation_id = 'huge'"
        )
    orch = await AgentOrchestrator.open(data_dir)
    try:
        page = await orch.list_sessions(limit=5)
        huge = page.sessions[0]
        assert huge.conversation_id == "huge"
        assert huge.metrics.tokens == 2**63 - 1
        assert huge.context.used_tokens == 2**63 - 1
        assert huge.metrics.bytes == 0
        assert huge.metrics.turns == 0
        assert huge.created_at.year == 9999
        counts = await orch.status_counts()
        assert counts["idle"] == 2
    finally:
        await orch.close()
    result = run_cli("--data-dir", str(data_dir), "sessions", "list", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "huge" in result.stdout


async def test_history_of_an_unknown_kind_is_skipped_and_counted(
    data_dir: Path, tmp_path: Path
) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        handle = (await orch.delegate(prompt="hello"))[0]
        await handle.wait()
        # What a newer delegate might write, and a row that is not JSON at all.
        await orch.store.history.add(
            BASE_US, "context_handed_off", "x", None, {"kind": "context_handed_off", "x": 1}
        )
        async with orch.store.db.transaction() as db:
            await db.execute(
                "INSERT INTO history(at, kind, payload) VALUES (?, 'broken', '{not json')",
                (BASE_US,),
            )
        found = await orch.store.history.events(50)
        assert [e.kind for e in found.events] == ["delegate_finished", "delegate_launched"]
        assert found.skipped == 2
        assert [e.kind for e in await orch.history(50)] == [
            "delegate_finished",
            "delegate_launched",
        ]
    finally:
        await orch.close()
    result = run_cli("--data-dir", str(data_dir), "history", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "hello" in result.stdout
