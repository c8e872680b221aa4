"""Our sessions' figures are counted tokens: every stored message ends up with its exact
count (tiktoken), and the session's totals and context are the sum of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import query, write_config

from core.orchestrator import AgentOrchestrator
from core.tokens import count_tokens

# Words an estimate by characters gets wrong in both directions: long ASCII runs
# (fewer tokens than characters / 4) and CJK, accents, emoji (more).
REPLY = ("naïve façade 東京都 🙂 " * 40) + ("x" * 2000) + (" the cat sat" * 60)

SCRIPT = f'''
[[rules]]
match = "(?i)talk"
tool = "shell"
reply = """{REPLY}"""
'''


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    script = tmp_path / "talk.toml"
    script.write_text(SCRIPT, encoding="utf-8")
    return write_config(
        tmp_path / "data", f'\n[agents.talker]\nrunner = "scripted"\nscript = "{script}"\n'
    )


async def test_every_stored_message_has_its_exact_count_and_the_session_their_sum(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    [handle] = await orch.delegate(prompt="talk to me", agent_id="talker")
    cid = (await handle.wait()).conversation_id
    [follow] = await orch.delegate(prompt="talk again", conversation_id=cid)
    await follow.wait()

    rows = query(
        data_dir, "SELECT content, token_count FROM messages WHERE conversation_id = ?", (cid,)
    )
    assert len(rows) >= 4
    for content, tokens in rows:
        assert tokens == count_tokens(content), content[:40]
    session = await orch.get_session(cid)
    total = sum(tokens for _, tokens in rows)
    assert session.metrics.tokens == total
    assert session.context.used_tokens == total
    assert session.context.estimated is False
