"""No secret stored or shown: a failing agent that prints credentials, through the console script.

The stand-in ``claude`` on PATH prints the secrets a real CLI might echo on a
crash (its environment, an auth header, a proxy URL), then fails. Nothing of
them may reach the SQLite file (read raw, WAL included), the terminal, or any
JSON output; the data folder stays private.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from pathlib import Path

import pytest
from support import run_cli

from core.config import DB_FILENAME

SECRETS = [
    "sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFF",
    "sk-proj-GGGGHHHHIIIIJJJJKKKK1234",
    "ghp_" + "a1B2" * 9,
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "hunter2hunter2",
    "s3cretpw",
    "dXNlcjpwYXNzd29yZA",
]
STDERR = f"""ANTHROPIC_API_KEY={SECRETS[0]}
Authorization: Bearer {SECRETS[1]}
GITHUB_TOKEN={SECRETS[2]}
aws_access_key_id={SECRETS[3]}
aws_secret_access_key = {SECRETS[4]}
DB_PASSWORD={SECRETS[5]}
proxy http://bob:{SECRETS[6]}@proxy.local:3128
Authorization: Basic {SECRETS[7]}==
"""

STAND_IN = """#!{python}
import json, sys
sys.stderr.write({stderr!r})
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
print(json.dumps({{"type": "assistant", "message": {{"id": "m", "content": [
    {{"type": "text", "text": "my key is {secret}"}}]}}}}), flush=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": True,
    "result": "Not logged in · Please run /login"}}), flush=True)
sys.exit(1)
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home whose PATH starts with a stand-in ``claude`` that leaks secrets and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(STAND_IN.format(python=sys.executable, stderr=STDERR, secret=SECRETS[0]))
    claude.chmod(0o755)
    return tmp_path


def _env(home: Path) -> dict[str, str]:
    return {"PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def _cli(home: Path, *args: str) -> tuple[int, str]:
    result = run_cli("--data-dir", str(home / "data"), *args, home=home, env=_env(home))
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout + result.stderr


def _assert_clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret} in {where}:\n{text}"


def test_a_failing_agent_leaks_no_secret(home: Path) -> None:
    code, out = _cli(home, "run", "--agent", "claude-code", "hello")
    assert code == 1
    _assert_clean(out, "delegate run")
    # The agent's words and how to fix them, not "(success)".
    assert "Not logged in" in out
    assert "claude /login" in out
    assert "ANTHROPIC_API_KEY" in out
    assert "(success)" not in out

    code, listing = _cli(home, "sessions", "list", "--json")
    assert code == 0
    cid = json.loads(listing)["sessions"][0]["conversation_id"]
    for command in (
        ["history", "--json"],
        ["history"],
        ["sessions", "show", cid],
        ["sessions", "show", cid, "--json"],
        ["sessions", "list"],
        [
            "tool",
            "delegate_sessions",
            json.dumps({"operation": "messages", "conversation_id": cid}),
        ],
    ):
        code, out = _cli(home, *command)
        assert code == 0, out
        _assert_clean(out, " ".join(command))

    data = home / "data"
    raw = b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith(DB_FILENAME))
    for secret in SECRETS:
        assert secret.encode() not in raw, f"{secret} stored"


def test_a_url_password_never_leaves_a_connection_error(home: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = home / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text(
        f"""
[agents.remote]
runner = "openai_compat"
base_url = "http://user:{SECRETS[6]}@127.0.0.1:{port}/v1"
model = "m"
description = "proxy at http://user:{SECRETS[6]}@127.0.0.1:{port}/v1"
""",
        encoding="utf-8",
    )
    code, out = _cli(home, "run", "--agent", "remote", "hello")
    assert code == 1
    _assert_clean(out, "delegate run")
    for command in (["history", "--json"], ["agents"], ["agents", "--json"]):
        code, out = _cli(home, *command)
        assert code == 0, out
        _assert_clean(out, " ".join(command))
    raw = b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith(DB_FILENAME))
    assert SECRETS[6].encode() not in raw


def test_data_folder_is_private(home: Path) -> None:
    code, _ = _cli(home, "run", "--agent", "echo", "hello")
    assert code == 0
    data = home / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / DB_FILENAME).stat().st_mode) == 0o600
