"""Errors a person can act on: one line, exit 1, never a traceback (through ``tui.cli.main``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import CONFIG_FILENAME, DB_FILENAME
from tui.cli import main


def _one_error_line(capsys: pytest.CaptureFixture[str], code: str) -> str:
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith(f"delegate: {code}: "), lines[0]
    assert "Traceback" not in out.err + out.out
    return lines[0]


def _config(tmp_path: Path, text: str) -> Path:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / CONFIG_FILENAME).write_text(text, encoding="utf-8")
    return data


BROKEN_CONFIGS = {
    "bad_toml": ("default_agent = [\n", "not valid TOML"),
    "wrong_type": ("default_agent = 3\n", "default_agent"),
    "unknown_key": ("colour = 'blue'\n", "colour: unknown key"),
    "agents_not_a_table": ("agents = 3\n", "agents"),
    "agent_not_a_table": ("[agents]\nx = 3\n", "agents.x"),
    "agent_wrong_type": ("[agents.x]\ncontext_limit = 'big'\n", "agents.x.context_limit"),
    "agent_unknown_key": ("[agents.x]\nmodle = 'gpt'\n", "agents.x.modle: unknown key"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_CONFIGS))
@pytest.mark.parametrize("command", [["agents"], ["sessions", "list"], []], ids=str)
def test_broken_config_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, command: list[str]
) -> None:
    text, names = BROKEN_CONFIGS[name]
    data = _config(tmp_path, text)
    # [] opens the picker: the settings are checked before the App exists.
    assert main(["--data-dir", str(data), *command]) == 1
    line = _one_error_line(capsys, "invalid_config")
    assert names in line
    assert "pydantic" not in line


def test_config_errors_never_quote_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _config(tmp_path, '[agents.x]\nenv = "sk-ant-api03-secretsecretsecret"\n')
    assert main(["--data-dir", str(data), "agents"]) == 1
    line = _one_error_line(capsys, "invalid_config")
    assert "secretsecret" not in line


def test_unknown_keymap_id_is_reported_before_the_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _config(tmp_path, '[keymap]\n"picker.dismis" = "k"\n')
    assert main(["--data-dir", str(data)]) == 1
    line = _one_error_line(capsys, "invalid_config")
    assert "'picker.dismis'" in line
    assert "picker.archive" in line  # the known ids are listed


@pytest.mark.parametrize("key", ["k", "question_mark", "shift+a", "space", "ctrl+k,d"])
def test_a_panel_action_on_a_typed_key_is_refused_before_the_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """Typed text goes to the panel's search: an action on a key typing produces
    would run when a word is typed, so the config is refused, naming the entry."""
    data = _config(tmp_path, f'[keymap]\n"picker.archive" = "{key}"\n')
    assert main(["--data-dir", str(data)]) == 1
    line = _one_error_line(capsys, "invalid_config")
    assert "picker.archive" in line
    assert "search" in line


def test_a_panel_action_on_a_chord_or_function_key_is_accepted() -> None:
    from tui.shared.keymap_check import check_keymap

    # A dialog's keys may be letters (dialogs have no search); the panel's may not.
    check_keymap({"picker.archive": "alt+k,f4", "picker.new": "ctrl+shift+n", "dismiss.yes": "y"})


def test_store_from_a_newer_delegate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "sessions", "list", "--json"]) == 0
    capsys.readouterr()
    db = sqlite3.connect(data / DB_FILENAME)
    db.execute("PRAGMA user_version = 999")
    db.close()
    for command in (["sessions", "list"], []):
        assert main(["--data-dir", str(data), *command]) == 1
        line = _one_error_line(capsys, "store_error")
        assert "newer" in line


# --- bytes on stdin -------------------------------------------------------


class _Stdin:
    """A stand-in for ``sys.stdin`` that only offers bytes (like a pipe does)."""

    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe{\x00}\x00",  # UTF-16 LE with its byte-order mark
        b"\xfe\xff\x00{\x00}",  # UTF-16 BE
        b'{"operation": "list\xff"}',  # invalid UTF-8
        b"\xc3",  # a cut sequence
        b"\xed\xa0\x80",  # an encoded surrogate
        b"",
        b"\x00",
    ],
)
def test_undecodable_stdin_is_invalid_request(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(data))
    assert main(["--data-dir", str(tmp_path / "d"), "tool", "delegate_sessions", "-"]) == 1
    out = capsys.readouterr()
    payload = json.loads(out.out)
    assert payload["error"]["code"] == "invalid_request"
    assert "Traceback" not in out.err


def test_utf8_byte_order_mark_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(b'\xef\xbb\xbf{"operation": "list"}'))
    assert main(["--data-dir", str(tmp_path / "d"), "tool", "delegate_sessions", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=200))
def test_any_bytes_on_stdin_end_in_a_json_answer(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(data))
    code = main(["--data-dir", str(tmp_path / "d"), "tool", "delegate_sessions", "-"])
    out = capsys.readouterr()
    assert code in (0, 1)
    payload = json.loads(out.out)
    if code == 1:
        assert payload["status"] == "error"
        assert payload["error"]["code"] in {
            "invalid_request",
            "invalid_cursor",
            "unknown_conversation",
        }
    assert "Traceback" not in out.err
