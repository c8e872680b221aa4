"""The end-to-end tests' agent CLIs: where the pinned installs are, and one isolated world."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from model_server import ModelServer

from core.orchestrator import AgentOrchestrator

REPO = Path(__file__).resolve().parents[2]
NPM_BIN = REPO / ".cache" / "npm-agents" / "node_modules" / ".bin"
CODEX_MODEL = "loopback-model"
CODEX_KEY_VAR = "DELEGATE_E2E_MODEL_KEY"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def find_cli(name: str) -> str:
    """The CLI's path (the pinned install first), or skip / fail saying how to get it."""
    path = os.pathsep.join([str(NPM_BIN), os.environ.get("PATH", "")])
    found = shutil.which(name, path=path)
    if found is None:
        reason = (
            f"{name} CLI not found (looked in {NPM_BIN} and PATH): run .ci/run, or "
            "npm install --prefix .cache/npm-agents @anthropic-ai/claude-code@2.1.328 "
            "@openai/codex@0.169.0"
        )
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@dataclass
class Agents:
    """One isolated world: HOME, the model server, and an orchestrator over a fresh store."""

    home: Path
    workdir: Path
    server: ModelServer
    orch: AgentOrchestrator

    @property
    def claude_projects(self) -> Path:
        return self.home / ".claude" / "projects"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"
