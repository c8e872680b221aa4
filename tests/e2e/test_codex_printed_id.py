"""The id ``delegate run --agent codex`` prints keeps working once Codex names its thread.

The real ``delegate`` console script drives the real Codex CLI (loopback model
server): the launch prints the conversation id delegate minted; once the run
ends, the session carries Codex's thread id, and the printed id still names it
everywhere an id is taken: ``sessions show``, ``context``, ``run --session``,
the JSON tools, ``sessions dismiss``. An import of the rollout afterwards adds
no second session.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import Any

import pytest
from agent_clis import Agents, find_cli
from support import DELEGATE

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 60
PRINTED = re.compile(r"run (\S+) in conversation (\S+)")


def delegate(agents: Agents, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script over the test's store, in the test's HOME and environment."""
    data = agents.orch.store.path.parent
    return subprocess.run(
        [str(DELEGATE), "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        cwd=agents.workdir,
        env=dict(os.environ),
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def ok_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def printed_ids(text: str) -> tuple[str, str]:
    found = PRINTED.search(text)
    assert found is not None, text
    return found.group(1), found.group(2)


def wait_until_ended(agents: Agents, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        run = ok_json(delegate(agents, "runs", "show", run_id, "--json"))["run"]
        if run["status"] != "running":
            return dict(run)
        assert time.monotonic() < deadline, "the detached run never ended"
        time.sleep(0.2)


def the_printed_id_still_works(agents: Agents, printed: str) -> str:
    """Every front end takes ``printed``; the session's id (Codex's thread id) is returned."""
    shown = ok_json(delegate(agents, "sessions", "show", printed, "--json"))
    thread = str(shown["session"]["conversation_id"])
    assert thread != printed  # Codex named its thread: the session was re-keyed
    rollouts = list((agents.codex_home / "sessions").rglob(f"rollout-*-{thread}.jsonl"))
    assert len(rollouts) == 1

    context = ok_json(delegate(agents, "context", printed, "--json"))
    assert context["context"]["conversation_id"] == thread
    request = json.dumps({"operation": "messages", "conversation_id": printed})
    messages = ok_json(delegate(agents, "tool", "delegate_sessions", request))
    assert messages["messages"], messages
    short = delegate(agents, "sessions", "show", printed[:8])
    assert short.returncode == 0, short.stderr

    follow_up = delegate(agents, "run", "--session", printed, "and again")
    assert follow_up.returncode == 0, follow_up.stderr
    assert printed_ids(follow_up.stderr)[1] == thread
    assert len(list((agents.codex_home / "sessions").rglob("rollout-*.jsonl"))) == 1

    # An import of the rollout, now or later, finds the session it belongs to.
    imported = delegate(agents, "import", "--json")
    assert imported.returncode == 0, imported.stderr
    listed = ok_json(delegate(agents, "tool", "delegate_sessions", '{"operation": "list"}'))
    assert [s["conversation_id"] for s in listed["sessions"]] == [thread]

    dismissed = delegate(agents, "sessions", "dismiss", printed)
    assert dismissed.returncode == 0, dismissed.stderr
    return thread


def test_the_id_a_codex_launch_prints_keeps_working(agents: Agents) -> None:
    find_cli("codex")
    launch = delegate(agents, "run", "--agent", "codex", "say pong")
    assert launch.returncode == 0, launch.stderr
    _, printed = printed_ids(launch.stderr)
    the_printed_id_still_works(agents, printed)


def test_the_id_a_detached_codex_launch_prints_keeps_working(agents: Agents) -> None:
    find_cli("codex")
    launch = delegate(agents, "run", "--detached", "--agent", "codex", "say pong")
    assert launch.returncode == 0, launch.stderr
    run_id, printed = printed_ids(launch.stdout)
    run = wait_until_ended(agents, run_id)
    assert run["status"] == "completed", run
    shown = ok_json(delegate(agents, "sessions", "show", printed, "--json"))
    assert shown["session"]["state"] == "ready"
    the_printed_id_still_works(agents, printed)
