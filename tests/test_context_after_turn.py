"""Turns driven with no supervisor running (``delegate run``, a detached worker) are
judged against the thresholds too, right after the turn (docs/context.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from context_support import hot_data_dir
from support import query, run_cli


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions launched without a folder work in the test's own (hand-offs land there)."""
    monkeypatch.chdir(tmp_path)


WAIT_S = 30.0


def _crossings(data: Path, cid: str) -> list[str]:
    return [
        level
        for (level,) in query(
            data,
            "SELECT level FROM context_crossings WHERE conversation_id = ? ORDER BY level",
            [cid],
        )
    ]


def _cells(data: Path, cid: str) -> list[str]:
    rows = query(
        data,
        "SELECT payload FROM history WHERE kind = 'context_threshold' AND conversation_id = ?"
        " ORDER BY id",
        [cid],
    )
    return [json.loads(payload)["level"] for (payload,) in rows]


def test_delegate_run_records_and_reports_the_levels_its_turn_crossed(tmp_path: Path) -> None:
    data = hot_data_dir(tmp_path)
    first = run_cli(
        "--data-dir", str(data), "run", "--agent", "hot", "--json", "half", home=tmp_path
    )
    assert first.returncode == 0, first.stderr
    cid = json.loads(first.stdout)["conversation_id"]
    assert _cells(data, cid) == ["notify"]
    assert "50% of its context window" in first.stderr
    second = run_cli(
        "--data-dir", str(data), "run", "--session", cid, "seventy-five", home=tmp_path
    )
    assert second.returncode == 0, second.stderr
    assert _cells(data, cid) == ["notify", "reminder", "handoff"]
    assert "hand-off" in second.stderr
    third = run_cli("--data-dir", str(data), "run", "--session", cid, "go on", home=tmp_path)
    assert third.returncode == 0, third.stderr
    assert _cells(data, cid) == ["notify", "reminder", "handoff"]  # once per level, ever
    assert "context window" not in third.stderr


def test_a_detached_worker_judges_its_turn_when_it_ends(tmp_path: Path) -> None:
    data = hot_data_dir(tmp_path)
    started = run_cli(
        "--data-dir",
        str(data),
        "run",
        "--detached",
        "--json",
        "--agent",
        "hot",
        "ninety-five",
        home=tmp_path,
    )
    assert started.returncode == 0, started.stderr
    cid = json.loads(started.stdout)["conversation_id"]
    deadline = time.monotonic() + WAIT_S
    while len(_crossings(data, cid)) < 4:
        assert time.monotonic() < deadline, f"crossings so far: {_crossings(data, cid)}"
        time.sleep(0.05)
    assert sorted(_cells(data, cid)) == ["force", "handoff", "notify", "reminder"]
