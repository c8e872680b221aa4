"""Context windows: how many tokens a session's model can hold, and how we know.

The most certain figure wins: what the agent recorded (Codex's
``model_context_window``), then the agent's configured ``context_limit``, then
the model's family in the table below, extended and overridden by
``[context] windows`` in the settings. Without any of them a session gets the
default window and its source stays unknown, so nothing pretends to know.
"""

from __future__ import annotations

from core.config import DEFAULT_CONTEXT_LIMIT, AgentConfig, ContextSettings
from core.models import WindowSource

LONG_CONTEXT_SUFFIX = "[1m]"
"""Claude Code names a model run with the 1M-token context like this (``sonnet[1m]``)."""
LONG_CONTEXT_LIMIT = 1_000_000

MODEL_WINDOWS: dict[str, int] = {
    # Anthropic: full ids (claude-sonnet-4-5-20250929) and Claude Code's aliases.
    "claude-": 200_000,
    "sonnet": 200_000,
    "opus": 200_000,
    "haiku": 200_000,
    # OpenAI: the input window (a reply's room is separate).
    "gpt-5": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    # Others commonly behind an OpenAI-compatible endpoint.
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "deepseek": 128_000,
    "qwen": 131_072,
    "llama-3": 128_000,
    "mistral": 128_000,
}
"""Model name prefix (lower case) -> context window in tokens; the longest prefix wins."""


def model_window(model: str | None, settings: ContextSettings) -> int | None:
    """The window of ``model``'s family, or None for a model neither table knows."""
    if not model:
        return None
    name = model.strip().lower()
    name = name.rsplit("/", 1)[-1]  # "openai/gpt-4o": a provider prefix is no family
    if name.endswith(LONG_CONTEXT_SUFFIX):
        return LONG_CONTEXT_LIMIT
    configured = {prefix.lower(): limit for prefix, limit in settings.windows.items()}
    table = {**MODEL_WINDOWS, **configured}
    matches = [prefix for prefix in table if name.startswith(prefix)]
    if not matches:
        return None
    return table[max(matches, key=len)]


def window_for(
    model: str | None,
    *,
    recorded: int | None,
    configured: int | None,
    settings: ContextSettings,
) -> tuple[int, WindowSource]:
    """A session's window and where it came from (see the module docstring)."""
    if recorded is not None and recorded > 0:
        return recorded, WindowSource.RECORDED
    if configured is not None and configured > 0:
        return configured, WindowSource.CONFIG
    limit = model_window(model, settings)
    if limit is not None:
        return limit, WindowSource.MODEL
    return DEFAULT_CONTEXT_LIMIT, WindowSource.UNKNOWN


def launch_window(agent: AgentConfig, settings: ContextSettings) -> tuple[int, WindowSource]:
    """The window of a session one of our agents starts: its ``context_limit`` when the
    configuration sets one, else its ``model``'s family, else the default."""
    configured = agent.context_limit if "context_limit" in agent.model_fields_set else None
    return window_for(agent.model, recorded=None, configured=configured, settings=settings)
