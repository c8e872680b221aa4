"""Which agent a launch that names none uses, and why: the one decision of the default agent.

A new user's first ``delegate run`` talks to a real agent they have installed, so
the default is, in order: ``$DELEGATE_AGENT``, the config's ``default_agent``, then
the first of Claude Code and Codex whose CLI is found here. With none of them,
a launch fails saying what to install; the scripted agents (``echo`` and its
siblings) serve the demo and the tests, chosen by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from core.config import AgentConfig, Settings
from core.errors import NoAgentInstalled, RunnerUnavailable
from core.runners.subprocess import resolve_binary

AGENT_ENV = "DELEGATE_AGENT"

# The real agents a default may fall to, in the order they are tried.
INSTALLED_ORDER = ("claude-code", "codex")

# The CLI each real runner starts when no binary is configured.
CLI_NAMES = {"claude_code": "claude", "codex": "codex"}

Source = Literal["env", "config", "installed"]


@dataclass(frozen=True)
class DefaultAgent:
    """The default agent and where the choice came from (said by ``delegate agents``)."""

    agent_id: str
    source: Source

    def reason(self) -> str:
        """A short phrase saying why this agent is the default."""
        if self.source == "env":
            return f"from ${AGENT_ENV}"
        if self.source == "config":
            return "from config.toml's default_agent"
        return "the first of " + ", ".join(INSTALLED_ORDER) + " installed here"


def cli_installed(config: AgentConfig, agent_id: str, env: Mapping[str, str]) -> bool:
    """Whether a CLI agent's binary is found here (endpoints and scripted agents: always)."""
    cli = CLI_NAMES.get(config.runner)
    if cli is None:
        return True
    try:
        resolve_binary(config.binary or cli, {**env, **config.env}, f"agents.{agent_id}.binary")
    except RunnerUnavailable:
        return False
    return True


def default_agent(settings: Settings, env: Mapping[str, str] | None = None) -> DefaultAgent:
    """The agent a launch without one uses, or ``runner_unavailable`` saying what to install."""
    env = os.environ if env is None else env
    named = env.get(AGENT_ENV, "").strip()
    if named:
        return DefaultAgent(named, "env")
    if settings.default_agent is not None:
        return DefaultAgent(settings.default_agent, "config")
    for agent_id in INSTALLED_ORDER:
        config = settings.agents.get(agent_id)
        if config is not None and cli_installed(config, agent_id, env):
            return DefaultAgent(agent_id, "installed")
    raise NoAgentInstalled()
