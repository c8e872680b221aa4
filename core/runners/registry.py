"""Build the runner an agent's configuration names."""

from __future__ import annotations

from core.config import AgentConfig
from core.runners.base import Runner
from core.runners.scripted import ScriptedRunner


def build_runner(agent_id: str, config: AgentConfig) -> Runner:
    if config.runner == "scripted":
        return ScriptedRunner.from_config(agent_id, config)
    raise AssertionError(f"unhandled runner {config.runner!r}")  # pragma: no cover
