"""The ``openai_compat`` runner over real HTTP, against the loopback model server.

No agent CLI is needed, so these run with the default suite (they are not
marked ``e2e``). The server misbehaves on request (``model_server.py``): it
cuts a stream before ``[DONE]``, stalls in the middle of one, redirects, or
compresses the body.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from model_server import INPUT_TOKENS_PER_MESSAGE, OUTPUT_TOKENS, ModelServer
from support import run_cli

from core.models import Role, RunStatus
from core.orchestrator import AgentOrchestrator

IDLE_TIMEOUT_S = 1.0
PASSWORD = "s3cret-pass"


def _closed_port() -> int:
    """A loopback port nobody listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(data: Path, server: ModelServer) -> None:
    agents = {
        "good": f"{server.url}/v1",
        "cut": f"{server.url}/cut/v1",
        "chunkcut": f"{server.url}/chunkcut/v1",
        "stall": f"{server.url}/stall/v1",
        "moved": f"{server.url}/redirect/v1",
        "zipped": f"{server.url}/gzip/v1",
        "secret": f"http://me:{PASSWORD}@127.0.0.1:{_closed_port()}/v1",
    }
    tables = "".join(
        f"""
[agents.{name}]
runner = "openai_compat"
base_url = "{url}"
model = "loopback-chat"
idle_timeout = {IDLE_TIMEOUT_S}
"""
        for name, url in agents.items()
    )
    data.mkdir(mode=0o700, exist_ok=True)
    (data / "config.toml").write_text(tables, encoding="utf-8")


@pytest.fixture
async def orch(tmp_path: Path, model_server: ModelServer) -> AsyncIterator[AgentOrchestrator]:
    _config(tmp_path / "data", model_server)
    orchestrator = await AgentOrchestrator.open(tmp_path / "data")
    yield orchestrator
    await orchestrator.close(wait=False)


async def _run(orch: AgentOrchestrator, agent: str) -> tuple[str, RunStatus, str | None]:
    [handle] = await orch.delegate("say pong", agent, cwd=str(Path.cwd()))
    run = await asyncio.wait_for(handle.wait(), 30)
    return handle.conversation_id, run.status, run.error


@pytest.mark.parametrize(
    ("agent", "says"),
    [("cut", "ended the stream before [DONE]"), ("chunkcut", "broke off its reply")],
)
async def test_a_stream_cut_before_done_fails_the_run(
    orch: AgentOrchestrator, agent: str, says: str
) -> None:
    conversation_id, status, error = await _run(orch, agent)
    assert status is RunStatus.FAILED
    assert error is not None
    assert says in error
    # What arrived before the cut is kept, as for any run cut short, beside the failure.
    page = await orch.recent_messages(conversation_id, 10)
    [partial] = [m.content for m in page.messages if m.role is Role.ASSISTANT]
    assert "pong 1".startswith(partial)
    assert any(says in m.content for m in page.messages if m.role is Role.SYSTEM)


async def test_a_stream_that_stalls_fails_after_the_idle_timeout(
    orch: AgentOrchestrator,
) -> None:
    started = time.monotonic()
    _, status, error = await _run(orch, "stall")
    assert status is RunStatus.FAILED
    assert error is not None
    assert f"sent nothing for {IDLE_TIMEOUT_S:g} s" in error
    assert "agents.stall.idle_timeout" in error
    assert time.monotonic() - started < 10 * IDLE_TIMEOUT_S


async def test_redirects_and_compressed_streams_are_followed(
    orch: AgentOrchestrator, model_server: ModelServer
) -> None:
    for agent in ("good", "moved", "zipped"):
        conversation_id, status, error = await _run(orch, agent)
        assert status is RunStatus.COMPLETED, (agent, error)
        session = await orch.get_session(conversation_id)
        assert session.context.used_tokens == INPUT_TOKENS_PER_MESSAGE + OUTPUT_TOKENS
        page = await orch.recent_messages(conversation_id, 10)
        assert page.messages[0].content == "pong 1"
    posts = [r for r in model_server.requests if r.method == "POST"]
    assert [r.path for r in posts] == [
        "/v1/chat/completions",
        "/redirect/v1/chat/completions",
        "/v1/chat/completions",  # the redirect, followed with its body
        "/gzip/v1/chat/completions",
    ]
    assert posts[2].body == posts[1].body


def test_a_connection_error_never_shows_the_url_password(
    tmp_path: Path, model_server: ModelServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data = home / "data"
    _config(data, model_server)
    result = run_cli("--data-dir", str(data), "run", "--agent", "secret", "hello", home=home)
    assert result.returncode == 1
    assert "cannot reach http://127.0.0.1:" in result.stderr
    history = run_cli("--data-dir", str(data), "history", "--json", home=home)
    assert history.returncode == 0, history.stderr
    [finished] = [e for e in json.loads(history.stdout) if e.get("error")]
    assert "cannot reach" in finished["error"]
    for shown in (result.stdout, result.stderr, history.stdout):
        assert PASSWORD not in shown
    for stored in data.iterdir():  # the database, its WAL, the settings aside
        if stored.name != "config.toml":
            assert PASSWORD.encode() not in stored.read_bytes(), stored.name
