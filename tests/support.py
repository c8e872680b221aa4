"""Helpers shared by the core tests: fast data, direct row counts, the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.config import DB_FILENAME
from core.models import Role, RunStatus, SessionMode, SessionState
from core.store import FinishedSession, NewMessage, NewSession, ready_state

BASE_US = 1_700_000_000_000_000  # 2023-11-14, well before any real run in a test
TABLES = ("sessions", "messages", "runs", "history", "dismissed")

SLOW_DELAY = 0.05
FLAKY_SCRIPT = """
[[rules]]
match = "(?i)explode"
fail = "tests exploded"
"""


def write_config(data_dir: Path, extra: str = "") -> Path:
    """A data folder whose config adds a ``slow`` and a ``flaky`` scripted agent."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    script = data_dir / "flaky.toml"
    script.write_text(FLAKY_SCRIPT, encoding="utf-8")
    (data_dir / "config.toml").write_text(
        f"""
[agents.slow]
runner = "scripted"
delay = {SLOW_DELAY}
persona = "slow"

[agents.flaky]
runner = "scripted"
script = "{script}"
persona = "flaky"
{extra}
""",
        encoding="utf-8",
    )
    return data_dir


def finished(
    conversation_id: str,
    last_us: int,
    *,
    agent_id: str = "echo",
    messages: int = 2,
    mode: SessionMode = SessionMode.STANDARD,
    state: SessionState | None = None,
) -> FinishedSession:
    """A finished session with ``messages`` alternating user/assistant messages."""
    created = last_us - messages
    return FinishedSession(
        session=NewSession(
            conversation_id=conversation_id,
            agent_id=agent_id,
            mode=mode,
            cwd="/tmp/project",
            title=f"session {conversation_id}",
            created_us=created,
            context_limit=200_000,
        ),
        messages=[
            NewMessage(
                id=f"{conversation_id}/m{i}",
                role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
                content=f"message {i} of {conversation_id}",
                created_us=created + i,
                token_count=4,
            )
            for i in range(messages)
        ],
        last_interacted_us=last_us,
        state=state or ready_state(mode, RunStatus.COMPLETED),
        last_run_status=RunStatus.COMPLETED,
    )


def db_path(data_dir: Path) -> Path:
    return data_dir / DB_FILENAME


def query(data_dir: Path, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """Read the store with a separate plain sqlite3 connection (what another process sees)."""
    with sqlite3.connect(db_path(data_dir)) as db:
        return list(db.execute(sql, params).fetchall())


def row_counts(data_dir: Path) -> dict[str, int]:
    return {t: query(data_dir, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}


# What a run in flight keeps writing by itself (its owner's heartbeat, the
# streamed tail, and the change feed number each write bumps): not what the
# operation under test wrote.
LIVE_RUN_COLUMNS = frozenset(
    {
        "heartbeat_at",
        "heartbeat_mono",
        "heartbeat_clock",
        "live_output",
        "stderr_tail",
        "last_output_at",
        "change_seq",
    }
)


def snapshot(data_dir: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table: equal snapshots mean nothing was written.

    A run in flight's live columns (:data:`LIVE_RUN_COLUMNS`) are left out: a
    slow machine lets its heartbeat fall between the two snapshots.
    """
    return {
        t: sorted(query(data_dir, f"SELECT {_columns(data_dir, t)} FROM {t}"), key=repr)
        for t in TABLES
    }


def _columns(data_dir: Path, table: str) -> str:
    names = [row[1] for row in query(data_dir, f"PRAGMA table_info({table})")]
    return ", ".join(n for n in names if table != "runs" or n not in LIVE_RUN_COLUMNS)


# --- the real console script ------------------------------------------------

DELEGATE = Path(sys.executable).parent / "delegate"


def cli_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment where the default data folder can only land under ``home``."""
    env = {k: v for k, v in os.environ.items() if k != "DELEGATE_HOME"}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "xdg-data"))
    env.update(extra or {})
    return env


def run_cli(
    *args: str,
    home: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DELEGATE), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=home,
        env=cli_env(home, env),
        timeout=timeout,
        check=False,
    )


def json_out(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.stdout.strip(), f"no output; stderr: {result.stderr}"
    return json.loads(result.stdout)
