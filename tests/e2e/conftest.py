"""Fixtures of the end-to-end tests: the real agent CLIs against a loopback model server.

The CLIs come from the npm registry (``.ci/run`` installs the pinned versions into
``.cache/npm-agents``). Without them a developer's run skips these tests with the
reason; under CI (``CI`` set) a missing CLI fails instead, so CI always runs them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agent_clis import CODEX_KEY_VAR, CODEX_MODEL, NPM_BIN, Agents
from model_server import ModelServer

from core.orchestrator import AgentOrchestrator


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer().start()
    yield server
    server.stop()


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path, server: ModelServer) -> None:
    """The CLIs and our importer see the same temporary HOME and the loopback server."""
    for var in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.setenv("DISABLE_AUTOUPDATER", "1")
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        f"""model = "{CODEX_MODEL}"
model_provider = "local"

[model_providers.local]
name = "loopback"
base_url = "{server.url}/v1"
wire_api = "responses"
env_key = "{CODEX_KEY_VAR}"
""",
        encoding="utf-8",
    )
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv(CODEX_KEY_VAR, "loopback-key")
    monkeypatch.setenv("PATH", os.pathsep.join([str(NPM_BIN), os.environ.get("PATH", "")]))


@pytest.fixture
async def agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_server: ModelServer
) -> AsyncIterator[Agents]:
    home = tmp_path / "home"
    workdir = tmp_path / "work"
    workdir.mkdir()
    _isolate(monkeypatch, home, model_server)
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        f"""
[agents.chat]
runner = "openai_compat"
base_url = "{model_server.url}/v1"
model = "loopback-chat"
api_key_env = "{CODEX_KEY_VAR}"
context_limit = 8000
""",
        encoding="utf-8",
    )
    orch = await AgentOrchestrator.open(data)
    yield Agents(home, workdir, model_server, orch)
    await orch.close(wait=False)
