"""After a CLI run: only that run's transcript is imported, after the result."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import sys
from pathlib import Path

import pytest
from support import query, write_config

from core.orchestrator import AgentOrchestrator

REALDATA = Path(__file__).parent / "fixtures" / "realdata" / "claude" / "projects"
TRANSCRIPT = REALDATA / "-experiments-ideas" / "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"

# A stand-in ``claude -p``: writes the transcript Claude Code would (a real one,
# renamed to the session id it was given) and reports success.
FAKE_CLAUDE = """#!{python}
import json, os, shutil, sys
sid = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--session-id="))
folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", "-work-here")
os.makedirs(folder, exist_ok=True)
shutil.copy({transcript!r}, os.path.join(folder, sid + ".jsonl"))
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
"""


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude config folder already holding other, never imported transcripts."""
    home = tmp_path / "claude"
    shutil.copytree(REALDATA, home / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


async def test_only_the_runs_transcript_is_imported_after_the_result(
    tmp_path: Path, claude_home: Path
) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable, transcript=str(TRANSCRIPT)))
    fake.chmod(0o755)
    data = write_config(
        tmp_path / "data", f'\n[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
    )
    orch = await AgentOrchestrator.open(data)
    # Another import holds the data folder's import lock meanwhile.
    lock = os.open(data / "import.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        [handle] = await orch.delegate("hello", "cc", cwd=str(tmp_path))
        # The result comes back while the import still waits for the lock.
        run = await asyncio.wait_for(handle.wait(), 20)
        assert run.status.value == "completed"
        assert query(data, "SELECT count(*) FROM source_files") == [(0,)]
    finally:
        os.close(lock)  # releases it: the import goes ahead
        await orch.close()
    files = query(data, "SELECT path, conversation_id FROM source_files")
    assert len(files) == 1  # that run's file, not the 22 others of the tree
    assert files[0][1] == handle.conversation_id
    assert files[0][0].endswith(f"{handle.conversation_id}.jsonl")
    [(turns, title)] = query(
        data,
        "SELECT turns, title FROM sessions WHERE conversation_id = ?",
        [handle.conversation_id],
    )
    assert turns >= 1
    assert title
