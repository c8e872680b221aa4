"""``delegate hooks install`` then ``uninstall`` gives every settings file back byte for
byte, removes only what delegate wrote, never writes a file the agent CLI cannot
parse, and loses no write of another program editing the file at the same time."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import ids
from core.errors import DiskFull, HookSettingsUnusable
from core.hooks.install import (
    CLAUDE_EVENTS,
    install,
    is_delegate_command,
    missing_for,
    status_of,
    uninstall,
)
from tui.cli import main


def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["--data-dir", str(tmp_path / "data"), *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def strict_json(text: str) -> object:
    """As Claude Code reads it: a leading BOM skipped, no NaN or Infinity."""

    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text.removeprefix("\ufeff"), parse_constant=refuse)


def round_trip(tmp_path: Path, agent: str, name: str, data: bytes) -> bytes:
    folder = tmp_path / f"agent-{agent}"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    status = install(agent, path, tmp_path / "data")
    assert status.installed
    installed = path.read_text(encoding="utf-8")
    if agent == ids.CLAUDE_CODE:
        strict_json(installed)
    else:
        tomllib.loads(installed)
    uninstall(agent, path, tmp_path / "data")
    return path.read_bytes()


CODEX_MULTILINE = '''model = "o4"
instructions = """
Run the tests first.
notify = ["this line belongs to the string"]
Then report.
"""
literal = \'\'\'
notify = ["so does this one"]
\'\'\'
# notify = ["a comment, not a key"]

[profiles.fast]
model = "o4-mini"
'''


def test_a_codex_multiline_string_holding_notify_keeps_every_line(tmp_path: Path) -> None:
    path = tmp_path / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_MULTILINE)
    before = tomllib.loads(CODEX_MULTILINE)
    status = install(ids.CODEX, path, tmp_path / "data")
    assert status.installed
    installed = tomllib.loads(path.read_text())
    assert installed["instructions"] == before["instructions"]
    assert installed["literal"] == before["literal"]
    assert installed["profiles"] == before["profiles"]
    assert installed["notify"][-3:] == ["hook", "codex", "notify"]
    uninstall(ids.CODEX, path, tmp_path / "data")
    assert path.read_text() == CODEX_MULTILINE


def test_a_codex_multiline_string_survives_uninstall_after_an_edit(tmp_path: Path) -> None:
    """The edit makes uninstall take delegate's line out of the text itself."""
    path = tmp_path / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_MULTILINE)
    install(ids.CODEX, path, tmp_path / "data")
    path.write_text(path.read_text() + "\n[profiles.added]\nmodel = 'x'\n")
    uninstall(ids.CODEX, path, tmp_path / "data")
    assert path.read_text() == CODEX_MULTILINE + "\n[profiles.added]\nmodel = 'x'\n"


USERS_OWN_DELEGATE_HOOKS = {
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "uv run delegate hook claude-code Stop"}]},
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "/opt/delegate/bin/delegate --data-dir /tmp/x"
                        " hook claude-code Stop",
                    }
                ]
            },
            {"hooks": [{"type": "command", "command": "echo delegate x hook claude-code Stop"}]},
        ],
        "SessionStart": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "python -m tui.cli hook claude-code SessionStart",
                    }
                ]
            }
        ],
    }
}


def test_a_users_own_hook_that_mentions_delegate_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    text = json.dumps(USERS_OWN_DELEGATE_HOOKS, indent=2) + "\n"
    path.write_text(text)
    assert status_of(ids.CLAUDE_CODE, path).events == []  # none of these is delegate's
    install(ids.CLAUDE_CODE, path, tmp_path / "data")
    # an edit after install: uninstall takes delegate's groups out of the text itself
    edited = path.read_text().replace('"hooks": {', '"theme": "dark",\n  "hooks": {', 1)
    path.write_text(edited)
    uninstall(ids.CLAUDE_CODE, path, tmp_path / "data")
    after = json.loads(path.read_text())
    assert after["hooks"] == USERS_OWN_DELEGATE_HOOKS["hooks"]
    assert after["theme"] == "dark"


def test_an_older_delegates_entries_are_still_recognised(tmp_path: Path) -> None:
    """The exact command line an older delegate wrote (no marker) is still its own."""
    data = tmp_path / "data"
    old = shlex.join(
        [sys.executable, "-P", "-m", "tui.cli", "--data-dir", str(data), "hook", "claude-code"]
    )
    settings_ = {
        "model": "opus",
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": f"{old} {event}", "timeout": 60}]}]
            for event in ("SessionStart", "UserPromptSubmit", "Stop")
        },
    }
    assert is_delegate_command(f"{old} Stop", ids.CLAUDE_CODE)
    assert not is_delegate_command(f"{old} Stop; rm -rf ~", ids.CLAUDE_CODE)
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(settings_, indent=2))
    assert status_of(ids.CLAUDE_CODE, path).installed
    uninstall(ids.CLAUDE_CODE, path, data)
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_an_older_install_is_replaced_by_marked_entries_and_known_to_open(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    old = shlex.join([sys.executable, "-P", "-m", "tui.cli", "--data-dir", str(data)])
    stop = {"type": "command", "command": f"{old} hook claude-code Stop", "timeout": 60}
    mixed = {"matcher": "x", "hooks": [{"type": "command", "command": "mine"}, stop]}
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [stop]}, mixed]}}, indent=2))
    assert missing_for(path, data) == ["SessionStart", "UserPromptSubmit"]
    assert missing_for(path, tmp_path / "elsewhere") == list(CLAUDE_EVENTS)
    install(ids.CLAUDE_CODE, path, data)
    installed = json.loads(path.read_text())
    commands = [
        entry["command"]
        for groups in installed["hooks"].values()
        for group in groups
        for entry in group["hooks"]
    ]
    assert commands.count(stop["command"]) == 0  # the older entries were replaced
    assert "mine" in commands
    assert sum(command.startswith("DELEGATE_HOOK=1 ") for command in commands) == 3
    assert missing_for(path, data) == []
    uninstall(ids.CLAUDE_CODE, path, data)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"matcher": "x", "hooks": [{"type": "command", "command": "mine"}]}]}
    }


def test_a_huge_number_stays_as_written_while_installed(tmp_path: Path) -> None:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    text = '{\n  "cleanupPeriodDays": 1e400,\n  "big": 123456789012345678901234567890\n}\n'
    path.write_text(text)
    install(ids.CLAUDE_CODE, path, tmp_path / "data")
    installed = path.read_text()
    assert "Infinity" not in installed
    assert "1e400" in installed
    assert "123456789012345678901234567890" in installed
    strict_json(installed)
    uninstall(ids.CLAUDE_CODE, path, tmp_path / "data")
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("empty", b""),
        ("blank", b"  \n\n"),
        ("empty object", b"{}"),
        ("no trailing newline", b'{"model": "opus"}'),
        ("crlf", b'{\r\n  "model": "opus",\r\n  "hooks": {}\r\n}\r\n'),
        ("bom", b'\xef\xbb\xbf{\n    "model": "opus"\n}\n'),
        ("unicode", '{"name": "Zoë ✓ 日本", "e": "\\u00e9"}\n'.encode()),
        ("duplicate keys", b'{"a": 1, "a": 2, "hooks": {"Stop": []}, "hooks": {}}\n'),
        ("tabs", b'{\n\t"hooks": {\n\t\t"Stop": [\n\t\t]\n\t}\n}'),
    ],
)
def test_claude_settings_come_back_byte_for_byte(tmp_path: Path, name: str, data: bytes) -> None:
    assert round_trip(tmp_path, ids.CLAUDE_CODE, "settings.json", data) == data


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("empty", b""),
        ("no trailing newline", b'model = "o4"'),
        ("crlf", b'# mine\r\nmodel = "o4"\r\n\r\n[tui]\r\nx = 1\r\n'),
        ("unicode", 'name = "Zoë ✓"\n'.encode()),
        ("comment only", b"# nothing yet\n"),
    ],
)
def test_codex_config_comes_back_byte_for_byte(tmp_path: Path, name: str, data: bytes) -> None:
    assert round_trip(tmp_path, ids.CODEX, "config.toml", data) == data


def test_settings_the_cli_cannot_parse_are_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "claude"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    for text in ('{"x": NaN}', '{"x": -Infinity}', '{"a": 1} // mine', "[1, 2]"):
        (folder / "settings.json").write_text(text)
        code, payload = cli(tmp_path, capsys, "hooks", "install", "claude-code")
        assert code == 1, text
        assert payload["error"]["code"] == "hook_settings_unusable"
        assert (folder / "settings.json").read_text() == text


# --- any file, generated --------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from(["1e400", "-0.0", "1.50", "2E-3"]).map(lambda s: _Raw(s)),
    st.text(max_size=8),
)


class _Raw(str):
    """A number written as is (json.dumps would rewrite it)."""


_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_user_hook = st.fixed_dictionaries(
    {"hooks": st.lists(st.fixed_dictionaries({"type": st.just("command"), "command": st.text()}))}
)
_hooks = st.dictionaries(
    st.sampled_from(["Stop", "SessionStart", "PreToolUse", "UserPromptSubmit"]),
    st.lists(_user_hook, max_size=2),
    max_size=3,
)


def _dump(value: object, indent: str | None, sep: str) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        parts = [
            f"{json.dumps(k, ensure_ascii=False)}: {_dump(v, indent, sep)}"
            for k, v in value.items()
        ]
    elif isinstance(value, list):
        parts = [_dump(v, indent, sep) for v in value]
    else:
        return json.dumps(value, ensure_ascii=False)
    opener, closer = ("{", "}") if isinstance(value, dict) else ("[", "]")
    if not parts:
        return opener + closer
    if indent is None:
        return opener + ", ".join(parts) + closer
    inner = ",\n".join(indent + p.replace("\n", "\n" + indent) for p in parts)
    return f"{opener}\n{inner}\n{closer}"


@st.composite
def claude_files(draw: st.DrawFn) -> bytes:
    settings_ = draw(
        st.dictionaries(st.text(max_size=6).filter(lambda k: k != "hooks"), _values, max_size=4)
    )
    if draw(st.booleans()):
        keys = list(settings_)
        at = draw(st.integers(0, len(keys)))
        items = list(settings_.items())
        items.insert(at, ("hooks", draw(_hooks)))
        settings_ = dict(items)
    indent = draw(st.sampled_from([None, "  ", "    ", "\t"]))
    text = _dump(settings_, indent, ", ")
    text += draw(st.sampled_from(["", "\n", "\n\n", "  "]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode()


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=claude_files())
def test_any_claude_settings_come_back_byte_for_byte(tmp_path: Path, data: bytes) -> None:
    assert round_trip(tmp_path, ids.CLAUDE_CODE, "settings.json", data) == data


_toml_lines = st.sampled_from(
    [
        'model = "o4"',
        "# a comment",
        "",
        'instructions = """\nnotify = ["x"]\n"""',
        "lit = '''\nnotify = 1\n'''",
        'arr = [\n  "a", # c\n  "b",\n]',
        "inline = { a = 1, b = 'notify = 2' }",
        '"quoted key" = true',
        "n = 1e10",
        "when = 1979-05-27T07:32:00Z",
        "[tui]",
        "[[profiles]]",
        'name = "Zoë"',
    ]
)


@st.composite
def codex_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(_toml_lines, max_size=8))
    seen: set[str] = set()  # keys of the table being written (none twice)
    kept = []
    for line in lines:
        if line.startswith("["):
            seen = set()
        elif "=" in line and not line.startswith("#"):
            key = line.split("=")[0].strip()
            if key in seen:
                continue
            seen.add(key)
        kept.append(line)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(kept) + draw(st.sampled_from(["", newline]))
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        text = ""
    return text.encode()


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=codex_files())
def test_any_codex_config_comes_back_byte_for_byte(tmp_path: Path, data: bytes) -> None:
    assert round_trip(tmp_path, ids.CODEX, "config.toml", data) == data


# --- another program editing the file at the same time ---------------------------

EDITOR = r"""
import json, os, sys, tempfile, time
path, count = sys.argv[1], int(sys.argv[2])
done = 0
while done < count:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        settings = json.loads(text)
    except (OSError, ValueError):
        continue
    settings[f"edit-{done}"] = done
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(settings, indent=2))
    os.replace(tmp, path)
    done += 1
    time.sleep(0.001)
"""


def test_a_concurrent_editor_loses_no_write(tmp_path: Path) -> None:
    folder = tmp_path / "claude"
    folder.mkdir()
    path = folder / "settings.json"
    path.write_text('{\n  "model": "opus"\n}\n')
    edits = 300
    refusals: list[str] = []
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(edits)])
    try:
        deadline = time.monotonic() + 60
        while editor.poll() is None and time.monotonic() < deadline:
            try:
                install(ids.CLAUDE_CODE, path, tmp_path / "data")
                uninstall(ids.CLAUDE_CODE, path, tmp_path / "data")
            except HookSettingsUnusable as exc:
                refusals.append(str(exc))
    finally:
        editor.wait(timeout=60)
    final = json.loads(path.read_text())
    lost = [n for n in range(edits) if final.get(f"edit-{n}") != n]
    assert lost == []
    assert final["model"] == "opus"
    assert all("kept changing" in refusal for refusal in refusals)  # said so, changed nothing


def test_a_full_disk_leaves_the_settings_whole_and_no_temporary_file(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    folder = tmp_path / "claude"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        path = folder / "settings.json"
        text = '{\n  "model": "opus"\n}\n'
        path.write_text(text)
        with contextlib.suppress(OSError), (folder / "filler").open("wb") as filler:
            filler.write(b"x" * 1024 * 1024)  # fills it (the write stops at ENOSPC)
        with pytest.raises(DiskFull) as raised:
            install(ids.CLAUDE_CODE, path, tmp_path / "data")
        assert raised.value.code == "disk_full"
        assert str(folder) in str(raised.value)
        assert path.read_text() == text
        assert sorted(p.name for p in folder.iterdir()) == ["filler", "settings.json"]
    finally:
        subprocess.run(["umount", str(folder)], check=False)
