"""What the human CLI prints: every imported session shows, nothing steers the terminal.

Commands run in-process through ``tui.cli.main``; Rich decides "terminal or not"
from the environment (``TTY_COMPATIBLE``, ``COLUMNS``), which is how a person's
terminal and a pipe differ.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tui.cli import main

REALDATA = Path(__file__).resolve().parent / "fixtures" / "realdata"
# ESC, BEL and the C1 controls (CSI, OSC, ... as single characters): none may reach a terminal.
STEERING = re.compile(r"[\x07\x1b\x80-\x9f]")
STRIP_SGR = re.compile(r"\x1b\[[0-9;]*m")
HOSTILE = "\x1b[2J\x1b]0;pwned\x07 clear \x9b31m and retitle"


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder holding every real transcript of the fixtures."""
    home = tmp_path / "home"
    shutil.copytree(REALDATA / "claude", home / ".claude")
    shutil.copytree(REALDATA / "codex", home / ".codex")
    for path in [home, *home.rglob("*")]:  # the originals are read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "import", "--json"]) == 0
    return data


def _ids(data: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["--data-dir", str(data), "sessions", "list", "--json", "--limit", "100"]) == 0
    return [s["conversation_id"] for s in json.loads(capsys.readouterr().out)["sessions"]]


def test_every_imported_session_shows(imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _ids(imported, capsys)
    assert len(ids) == 20  # 22, but for Claude Code's two warm-up sub-agents (hidden)
    for cid in ids:
        code = main(["--data-dir", str(imported), "sessions", "show", cid, "--last", "100"])
        out = capsys.readouterr()
        assert code == 0, (cid, out.err)
        assert cid in out.out
        assert "Traceback" not in out.err


@pytest.fixture
def hostile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """A session whose title, prompt and reply hold terminal control sequences."""
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "run", "--agent", "echo", HOSTILE]) == 0
    ids = _ids(data, capsys)
    return data, ids[0]


@pytest.mark.parametrize("tty", [True, False], ids=["terminal", "piped"])
@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "list"],
        ["sessions", "show", "{id}"],
        ["history"],
        ["sessions", "show", "{id}", "--json"],
        ["history", "--json"],
        ["sessions", "list", "--json"],
    ],
    ids=" ".join,
)
def test_transcript_text_never_steers_the_terminal(
    hostile: tuple[Path, str],
    command: list[str],
    tty: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, cid = hostile
    if tty:
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
    capsys.readouterr()
    args = [part.replace("{id}", cid) for part in command]
    assert main(["--data-dir", str(data), *args]) == 0
    out = capsys.readouterr()
    # Our own styling (SGR) is the only escape sequence allowed through.
    assert not STEERING.search(STRIP_SGR.sub("", out.out)), out.out
    assert not STEERING.search(out.err), out.err
    if "--json" in command:  # JSON keeps the text, escaped
        assert "\\u001b]0;pwned" in out.out


def test_an_error_naming_hostile_input_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--data-dir", str(tmp_path / "d"), "sessions", "show", "\x1b]0;pwned\x07abc"])
    out = capsys.readouterr()
    assert code == 1
    assert not STEERING.search(out.err + out.out)
    assert "pwned" in out.err


# --- the list at 80 columns, and piped ------------------------------------


def test_piped_list_keeps_full_ids_and_titles(
    imported: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _ids(imported, capsys)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--data-dir", str(imported), "sessions", "list", "--limit", "100"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for cid in ids:
        row = next(line for line in lines if line.split("\t")[0] == cid)
        assert row.split("\t")[-1].strip(), f"no title for {cid}: {row!r}"


def test_plain_flag_is_the_piped_layout_on_a_terminal(
    imported: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _ids(imported, capsys)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert main(["--data-dir", str(imported), "sessions", "list", "--plain", "--limit", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[1]
    assert first.split("\t")[0] == ids[0]


def test_list_at_80_columns_keeps_id_title_and_age(
    imported: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _ids(imported, capsys)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--data-dir", str(imported), "sessions", "list", "--limit", "5"]) == 0
    out = STRIP_SGR.sub("", capsys.readouterr().out)
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines if not line.startswith("more")), lines
    rows = [line for line in lines if line.strip() and not line.startswith(("id", "more"))]
    assert len(rows) == 5
    for row, cid in zip(rows, ids[:5], strict=True):
        shown = row.split()[0]
        assert len(shown) >= 8, row
        assert cid.startswith(shown), (row, cid)
        assert re.search(r"(\d+[mhdwy] ago|just now)", row), row
        assert len(row.split()) >= 4, row  # id, title words, age
    hint = next(line for line in lines if line.startswith("more"))
    assert "--cursor" in hint  # on one line: copy-pasteable


def test_a_reader_that_stops_early_gets_no_error(tmp_path: Path) -> None:
    """``delegate run - < prompt | head -c 10``: the pipe closing early is the reader's
    choice, not an error of ours (no ``internal_error`` line, no traceback)."""
    import fcntl
    import os
    import subprocess
    import sys

    data = tmp_path / "data"
    script = (
        "import sys; from tui.cli import main;"
        f" sys.exit(main(['--data-dir', {str(data)!r}, 'run', '--agent', 'echo', '-']))"
    )
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # far less than the listing
    writer = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    os.close(write_end)
    assert writer.stdin is not None
    writer.stdin.write(b"word " * 40_000)  # echoed back: far more than the pipe holds
    writer.stdin.close()
    assert os.read(read_end, 10)
    os.close(read_end)  # the reader has what it wanted
    assert writer.stderr is not None
    err = writer.stderr.read().decode()
    writer.wait(timeout=60)
    assert "internal_error" not in err, err
    assert "Traceback" not in err, err
