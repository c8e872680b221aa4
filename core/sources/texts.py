"""What of a transcript line full-content search indexes: prompts and the agent's text.

Stdlib only (worker processes import it). A person's prompts and the
assistant's visible text are kept; tool calls, tool output, thinking and the
context an agent CLI injects are not (docs/search.md). Secrets are masked
before the text leaves the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.redact import redact
from core.sources import claude, codex
from core.sources.common import iso_to_us

USER, ASSISTANT = "user", "assistant"
MAX_TEXT_CHARS = 64 * 1024
"""A message is indexed up to here: a pasted log past it adds size, not findability."""

SEPARATOR = "\n\ue000\n"
"""Between two texts of one search part: U+E000 (private use) is a word to FTS5's
tokenizer, so the words either side are never next to each other (a phrase does
not run from one message into the next); it is taken out of every text and query."""

Searchable = tuple[str, int, str]
"""``(role, at_us, text)`` of one indexed message; ``at_us`` is 0 when the line has no time."""


def _clean(text: str) -> str:
    """Cut, masked (a secret never enters the index), free of snippet markers.

    Characters 2 and 3 (STX, ETX) mark matches in snippets (core.search.querying);
    U+E000 separates the texts of a search part.
    """
    cleaned = redact(text[:MAX_TEXT_CHARS])
    return cleaned.replace("\x02", " ").replace("\x03", " ").replace("\ue000", " ")


def _at(line: dict[str, Any]) -> int:
    return iso_to_us(line.get("timestamp")) or 0


def claude_text(line: dict[str, Any]) -> Searchable | None:
    """A Claude Code line's prompt or assistant text, or None."""
    kind = line.get("type")
    if kind == "user":
        if claude.user_role(line) != claude.USER:
            return None
        prompt = claude.real_prompt(claude.user_text(line))
        return (USER, _at(line), _clean(prompt)) if prompt else None
    if kind != "assistant":
        return None
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    else:
        return None
    return (ASSISTANT, _at(line), _clean(text)) if text.strip() else None


class CodexTexts:
    """A rollout's prompts and assistant messages, the echo of a prompt dropped.

    Interactive rollouts log each prompt twice (a ``user`` response item, then
    ``event_msg/user_message``); ``codex exec`` logs only the item.
    """

    def __init__(self) -> None:
        self._last_item_prompt: str | None = None

    def __call__(self, line: dict[str, Any]) -> Searchable | None:
        kind = line.get("type")
        if kind != "event_msg" and kind != "response_item":
            return None  # most lines: no need to look further
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return None
        if kind == "event_msg" and payload.get("type") == "user_message":
            message = payload.get("message")
            if not isinstance(message, str) or not message.strip():
                return None
            if message.strip() == self._last_item_prompt:
                return None
            return USER, _at(line), _clean(message)
        if kind != "response_item" or payload.get("type") != "message":
            return None
        if payload.get("role") == "user":
            text = codex.user_item_text(payload)
            if not text or not text.strip():
                return None
            self._last_item_prompt = text.strip()
            return USER, _at(line), _clean(text)
        if payload.get("role") != "assistant":
            return None
        content = payload.get("content")
        parts = content if isinstance(content, list) else []
        text = "".join(
            str(b.get("text", ""))
            for b in parts
            if isinstance(b, dict) and b.get("type") in ("output_text", "text")
        )
        return (ASSISTANT, _at(line), _clean(text)) if text.strip() else None


Extractor = Callable[[dict[str, Any]], Searchable | None]


def extractor(source: str) -> Extractor:
    """The per-file text extractor for an agent's transcript format."""
    return claude_text if source == claude.SOURCE else CodexTexts()
