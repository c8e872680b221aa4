"""``delegate context SESSION [--json]``: the figures, the window and its source, the
thresholds crossed and the chain, through ``tui.cli.main`` on runs of a scripted agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import write_config

from tui.cli import main

SCRIPT = """
[[rules]]
match = "(?i)first"
reply = "ok"
context_tokens = 40000

[[rules]]
match = "(?i)second"
reply = "ok"
context_tokens = 75000
"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    script = tmp_path / "usage.toml"
    script.write_text(SCRIPT, encoding="utf-8")
    # The figures are the subject here, not acting on them: `delegate run` would
    # otherwise hand the 75 % session off (and continue it) before it is reported.
    return write_config(
        tmp_path / "data",
        f'\n[agents.heavy]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 100000\n'
        "\n[context]\nenabled = false\n",
    )


def cli(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _session(capsys: pytest.CaptureFixture[str], data: Path) -> str:
    code, out, _ = cli(capsys, data, "run", "--agent", "heavy", "--json", "first")
    assert code == 0, out
    cid: str = json.loads(out)["conversation_id"]
    code, out, _ = cli(capsys, data, "run", "--session", cid, "--json", "second")
    assert code == 0, out
    return cid


def test_context_json_has_the_figures_window_trend_and_thresholds(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cid = _session(capsys, data)

    code, out, _ = cli(capsys, data, "context", cid[:8], "--json")

    assert code == 0
    report: dict[str, Any] = json.loads(out)["context"]
    assert report["conversation_id"] == cid
    assert (report["used_tokens"], report["limit_tokens"]) == (75_000, 100_000)
    assert report["percent"] == 75.0
    assert report["window_source"] == "config"
    assert report["estimated"] is False
    assert report["tokens_per_turn"] == 35_000
    assert report["turns_left"] == 0
    assert report["trend"] == [40_000, 75_000]
    assert report["level"] == "handoff"
    assert report["thresholds"] == {"notify": 50, "reminder": 60, "handoff": 70, "force": 90}
    assert report["chain"] == [cid]
    assert report["breakdown"]["dialog"] > 0


def test_context_for_people_names_the_window_source_and_the_level(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cid = _session(capsys, data)

    code, out, _ = cli(capsys, data, "context", cid)

    assert code == 0
    assert "75k / 100k tokens (75%)" in out
    assert "window 100k (config)" in out
    assert "35k per turn" in out
    assert "hand-off level (70%)" in out


def test_an_unknown_session_is_one_line_and_exit_1(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, data, "context", "nope-nope-nope", "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "unknown_conversation"
    code, out, err = cli(capsys, data, "context", "nope-nope-nope")
    assert code == 1
    assert "Traceback" not in err
    assert "nope-nope-nope" in err
