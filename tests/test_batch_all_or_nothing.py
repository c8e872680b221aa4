"""A batch with one bad item starts none, through the console script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import row_counts, run_cli, write_config

BAD_LAST_ITEMS = {
    "unknown agent": {"prompt": "three", "agent_id": "nobody"},
    "missing cwd": {"prompt": "three", "cwd": "no/such/folder"},
    "unknown user's home": {"prompt": "three", "cwd": "~nosuchuser"},
    "cwd is a file": {"prompt": "three", "cwd": "config.toml"},
    "runner unavailable": {"prompt": "three", "agent_id": "nobinary"},
    "unusable script": {"prompt": "three", "agent_id": "badscript"},
    "blank prompt": {"prompt": "  "},
}


@pytest.mark.parametrize("bad", list(BAD_LAST_ITEMS))
def test_a_batch_whose_last_item_is_bad_creates_no_session(tmp_path: Path, bad: str) -> None:
    data = write_config(
        tmp_path / "data",
        """
[agents.nobinary]
runner = "claude_code"
binary = "no-such-claude-binary"

[agents.badscript]
runner = "scripted"
script = "/no/such/script.toml"
""",
    )
    (tmp_path / "config.toml").touch()
    batch = [{"prompt": "one"}, {"prompt": "two", "agent_id": "slow"}, BAD_LAST_ITEMS[bad]]
    request = json.dumps({"batch": batch})
    result = run_cli("--data-dir", str(data), "tool", "delegate_agent", request, home=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert json.loads(result.stdout)["status"] == "error"
    counts = row_counts(data)
    assert counts["sessions"] == 0
    assert counts["runs"] == 0
