"""`delegate sessions show` numbers messages in conversation order, never by byte offset."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from source_homes import Homes

from tui.cli import main

LONG_CLAUDE = "cb2e607c-c758-415a-8b45-c49e4631906a"


def test_show_numbers_the_newest_messages_in_order(
    realdata: Homes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    args = ["--data-dir", data, "import", "--claude-dir", str(realdata.claude)]
    assert main([*args, "--codex-dir", str(realdata.codex), "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", data, "sessions", "show", LONG_CLAUDE, "--json"]) == 0
    capsys.readouterr()

    assert main(["--data-dir", data, "sessions", "show", LONG_CLAUDE, "--last", "4"]) == 0

    numbers = [int(n) for n in re.findall(r"· #(\d+)", capsys.readouterr().out)]
    assert len(numbers) == 4
    assert numbers == list(range(numbers[0], numbers[0] + 4))  # oldest of the page first
    assert numbers[-1] < 1_000  # a count of messages, not the byte offset of a line
