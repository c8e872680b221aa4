"""``request_capsule`` through the real Claude Code CLI and the loopback model server:
the capsule prompt goes into the session as a follow-up (``--resume``), the model's
answer comes back as a draft capsule on disk, registered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from agent_clis import Agents, find_cli
from test_real_clis import processes_gone, run_to_end

from core.capsules.registry import capsule_document
from core.capsules.storage import capsules_dir
from core.drafting.capsule_request import request_capsule
from core.models import DocumentStatus

pytestmark = pytest.mark.e2e

BRANCH = "feature/capsules"
CAPSULE = f"""---
branch: {BRANCH}
source_session: main
created_at: 2026-11-23T21:00:00Z
primary_objective: "Carry the login work over"
token_budget: 1200
version: 0.1
---
# Mission Snapshot
- **User intent:** people log in.

# Key Decisions & Rationale
1. Cookies, no session table.

# Active Workstreams
- Login endpoints.

# Pending Actions
- [ ] Logout.

# Knowledge Base
- `auth.py`.

# Risks & Watchpoints
- Key rotation.

# Transcript Highlights
- 2026-11-23T20:40:00Z: cookies chosen.

# Exploratory Threads & User Preferences
- Small commits.
"""


def _git_repo(folder: Path) -> None:
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    for args in (["init", "-q", "-b", BRANCH], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


async def test_claude_code_writes_its_capsule_when_asked(agents: Agents) -> None:
    find_cli("claude")
    _git_repo(agents.workdir)
    [launch] = await agents.orch.delegate("say pong", "claude-code", cwd=str(agents.workdir))
    await run_to_end(launch)
    cid = launch.conversation_id
    # The model answers the capsule prompt with the capsule, fenced, after a sentence.
    agents.server.reply_when("capsule", f"Here is my capsule.\n\n```markdown\n{CAPSULE}```\n")

    draft = await request_capsule(agents.orch, cid, timeout_s=60)

    calls = agents.server.model_calls("/v1/messages")
    assert len(calls) == 2  # the launch, then the request as a follow-up of the same session
    sent = json.dumps(calls[1].body["messages"])
    assert "say pong" in sent  # resumed: the history went with it
    assert BRANCH in sent  # the capsule prompt, filled for this session
    assert cid in sent
    assert draft.path.parent == capsules_dir(agents.workdir.resolve()) / BRANCH
    assert draft.path.read_text(encoding="utf-8") == CAPSULE
    assert draft.problems == []
    document = await capsule_document(agents.orch.store, draft.path)
    assert document is not None
    assert document.document_id == draft.document_id
    assert document.status is DocumentStatus.DRAFT
    assert document.source_session == cid
    assert await processes_gone(agents.home)


async def test_codex_writes_its_capsule_when_asked(agents: Agents) -> None:
    find_cli("codex")
    _git_repo(agents.workdir)
    [launch] = await agents.orch.delegate("say pong", "codex", cwd=str(agents.workdir))
    await run_to_end(launch)
    thread_id = launch.conversation_id  # Codex names the thread: the session's id now
    agents.server.reply_when("capsule", f"```markdown\n{CAPSULE}```")

    draft = await request_capsule(agents.orch, thread_id, timeout_s=60)

    calls = agents.server.model_calls("/v1/responses")
    assert len(calls) == 2  # the launch, then the request resuming the same thread
    assert thread_id in json.dumps(calls[1].body["input"])
    assert draft.path.read_text(encoding="utf-8") == CAPSULE
    document = await capsule_document(agents.orch.store, draft.path)
    assert document is not None
    assert document.source_session == thread_id
    assert document.status is DocumentStatus.DRAFT
    assert await processes_gone(agents.home)
