"""Every record type the pinned Claude Code and Codex write is in the importer's lists.

The real CLIs run the flows a person's sessions go through — a turn, a resume, a
compaction (Claude Code's ``/compact``, Codex's automatic one past its token limit),
Claude Code's ``/clear`` and a fork, and Claude Code's interactive screen in tmux
with a ``/rename`` — against the loopback model server, in the test's own HOME.
Every ``type`` they write (and, for Codex, the payload type of ``event_msg`` and
``response_item`` lines) must be in ``core/sources/claude.py`` /
``core/sources/codex.py``; a new pinned release that writes another type fails
here, naming it, until its lists are updated. The import of those transcripts then
reports no unknown type and no damage.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from agent_clis import Agents, find_cli
from test_reopen_real import Pane, first_run_done

from core.sources import claude, codex

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 90


async def _run(agents: Agents, *argv: str) -> str:
    """Run a CLI in the test's HOME and work folder; its stdout (it must succeed)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=agents.workdir,
        env=dict(os.environ),
        stdin=asyncio.subprocess.DEVNULL,  # codex exec reads stdin when it is not a terminal
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT_S)
    assert proc.returncode == 0, f"{argv[:3]} exited {proc.returncode}: {err.decode()[-2000:]}"
    return out.decode()


def _records(files: Iterable[Path]) -> list[dict[str, Any]]:
    found = []
    for path in files:
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                found.append(json.loads(raw))
    return found


def _codex_type(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    payload = record.get("payload")
    if kind in ("event_msg", "response_item") and isinstance(payload, dict):
        return f"{kind}/{payload.get('type')}"
    return kind


def _codex_known(name: str) -> bool:
    kind, _, sub = name.partition("/")
    if kind == "event_msg":
        return sub in codex.KNOWN_EVENT_TYPES
    if kind == "response_item":
        return sub in codex.KNOWN_ITEM_TYPES
    return kind in codex.KNOWN_TYPES


async def test_claude_code_writes_only_known_record_types(agents: Agents) -> None:
    cli = find_cli("claude")
    session = str(uuid.uuid4())
    stream = ["--output-format", "stream-json", "--verbose"]
    await _run(agents, cli, "-p", "say pong", "--session-id", session, *stream)
    await _run(agents, cli, "-p", "and again", "--resume", session, *stream)
    await _run(agents, cli, "-p", "/compact", "--resume", session, *stream)
    await _run(agents, cli, "-p", "after the compaction", "--resume", session, *stream)
    await _run(agents, cli, "-p", "/clear", "--resume", session, *stream)
    await _run(agents, cli, "-p", "a fork", "--resume", session, "--fork-session", *stream)

    records = _records(agents.claude_projects.rglob("*.jsonl"))
    written = {str(r.get("type")) for r in records}
    versions = {r["version"] for r in records if isinstance(r.get("version"), str)}
    assert versions == {claude.KNOWN_TYPES_VERSION}, "the pinned CLI is another release"
    assert "system" in written  # the compaction's boundary: the flows ran
    assert written - claude.KNOWN_TYPES == set(), (
        f"Claude Code {claude.KNOWN_TYPES_VERSION} writes record types "
        "core/sources/claude.py KNOWN_TYPES does not list"
    )

    report = await agents.orch.import_sources(agents.home / ".claude", agents.codex_home)
    assert report.unknown_types == []
    assert report.malformed_lines == report.oversized_lines == 0
    assert report.problem_line is None
    assert report.sessions_added >= 2  # the session and its fork


async def test_codex_writes_only_known_record_types(agents: Agents) -> None:
    cli = find_cli("codex")
    # Past this many tokens Codex compacts the thread on its own before the next turn.
    config = agents.codex_home / "config.toml"  # a top-level key: before the tables
    config.write_text("model_auto_compact_token_limit = 50000\n" + config.read_text())
    exec_ = [cli, "exec", "--json", "--skip-git-repo-check"]
    out = await _run(agents, *exec_, "say pong")
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    [thread] = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
    await _run(agents, *exec_, "resume", thread, "and again")
    agents.server.context_tokens = 200_000  # a nearly full window: the next turn compacts
    await _run(agents, *exec_, "resume", thread, "a big turn")
    agents.server.context_tokens = None
    await _run(agents, *exec_, "resume", thread, "after the compaction")

    records = _records((agents.codex_home / "sessions").rglob("rollout-*.jsonl"))
    written = {_codex_type(r) for r in records}
    versions = {r["payload"].get("cli_version") for r in records if r.get("type") == "session_meta"}
    assert versions == {codex.KNOWN_TYPES_VERSION}, "the pinned CLI is another release"
    assert "compacted" in written  # the flows ran, the compaction included
    unknown = {name for name in written if not _codex_known(name)}
    assert unknown == set(), (
        f"Codex {codex.KNOWN_TYPES_VERSION} writes record types core/sources/codex.py "
        "KNOWN_TYPES / KNOWN_ITEM_TYPES / KNOWN_EVENT_TYPES do not list"
    )

    report = await agents.orch.import_sources(agents.home / ".claude", agents.codex_home)
    assert report.unknown_types == []
    assert report.malformed_lines == report.oversized_lines == 0
    assert report.problem_line is None
    assert report.sessions_added == 1


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
async def test_claude_code_interactive_writes_only_known_record_types(
    agents: Agents, tmp_path: Path
) -> None:
    """The interactive screen writes records ``-p`` does not (titles, file history)."""
    cli = find_cli("claude")
    first_run_done(agents.home, agents.workdir, os.environ["ANTHROPIC_API_KEY"])
    pane = Pane(f"delegate-e2e-types-{os.getpid()}-{tmp_path.name}")
    env = {k: v for k, v in os.environ.items() if k != "TMUX"} | {"TERM": "xterm-256color"}
    window = ["-s", "panel", "-x", "120", "-y", "36", "-c", str(agents.workdir)]
    started = await asyncio.create_subprocess_exec(
        *["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", *window, cli],
        env=env,
    )
    try:
        assert await asyncio.wait_for(started.wait(), 10) == 0
        await pane.wait_for(lambda shown: "❯" in shown, "the prompt box")
        calls = agents.server.model_calls
        for prompt, model_calls in [
            ("say pong", 1),
            ("and again", 1),
            ("/rename a title a person chose", 0),
            ("/compact", 1),
            ("after the compaction", 1),
        ]:
            before = len(calls("/v1/messages"))
            await pane.type(prompt)
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while len(calls("/v1/messages")) < before + model_calls:
                assert time.monotonic() < deadline, f"no model call after {prompt!r}"
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.5)  # the reply written to the transcript
    finally:
        pane.tmux("kill-server")

    written = {str(r.get("type")) for r in _records(agents.claude_projects.rglob("*.jsonl"))}
    assert "custom-title" in written  # the /rename: the interactive flows ran
    assert written - claude.KNOWN_TYPES == set(), (
        f"Claude Code {claude.KNOWN_TYPES_VERSION} writes record types "
        "core/sources/claude.py KNOWN_TYPES does not list"
    )
