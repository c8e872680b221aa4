"""Build the runner an agent's configuration names."""

from __future__ import annotations

from core.config import AgentConfig
from core.runners.base import Runner
from core.runners.claude_code import ClaudeCodeRunner
from core.runners.codex import CodexRunner
from core.runners.scripted import ScriptedRunner


def build_runner(agent_id: str, config: AgentConfig) -> Runner:
    if config.runner == "scripted":
        return ScriptedRunner.from_config(agent_id, config)
    if config.runner == "claude_code":
        return ClaudeCodeRunner.from_config(agent_id, config)
    if config.runner == "codex":
        return CodexRunner.from_config(agent_id, config)
    if config.runner == "openai_compat":
        # Deferred: its HTTP client's import is slow, and most commands never use it.
        from core.runners.openai_compat import OpenAICompatRunner

        return OpenAICompatRunner.from_config(agent_id, config)
    raise AssertionError(f"unhandled runner {config.runner!r}")  # pragma: no cover
