"""Worker processes give the same index as parsing in a thread; the ``import`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from source_homes import Homes
from support import query

from core.models import SessionScope
from core.orchestrator import AgentOrchestrator
from tui.cli import main


async def _dump(orch: AgentOrchestrator) -> list[dict[str, object]]:
    page = await orch.list_sessions(100, scope=SessionScope(top_level=False, warmup=True))
    return [s.model_dump(mode="json") for s in page.sessions]


async def test_worker_processes_give_the_same_sessions(
    orch: AgentOrchestrator, realdata: Homes, tmp_path: Path
) -> None:
    inline = await orch.import_sources(realdata.claude, realdata.codex, workers=0)
    other = await AgentOrchestrator.open(tmp_path / "pooled")
    try:
        pooled = await other.import_sources(realdata.claude, realdata.codex, workers=2)
        assert pooled.workers == 2
        assert inline.workers == 0
        assert (pooled.sessions_added, pooled.bytes_read) == (
            inline.sessions_added,
            inline.bytes_read,
        )
        assert await _dump(other) == await _dump(orch)
    finally:
        await other.close()


def test_import_command_json_and_report(
    realdata: Homes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "cli-data"
    args = ["--data-dir", str(data), "import", "--claude-dir", str(realdata.claude)]
    args += ["--codex-dir", str(realdata.codex)]

    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["files_seen"], report["sessions_added"]) == (24, 22)

    assert main(args) == 0  # people get a summary line
    out = capsys.readouterr().out
    assert "24 files: 0 read, 24 unchanged" in out

    assert main(["--data-dir", str(data), "import", "--report", "--json"]) == 0
    last = json.loads(capsys.readouterr().out)
    assert last["files_skipped_unchanged"] == 24
    assert query(data, "SELECT count(*) FROM import_reports") == [(2,)]


def test_report_before_any_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(tmp_path / "d"), "import", "--report"]) == 1
    assert "no import yet" in capsys.readouterr().err
