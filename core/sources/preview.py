"""Newest-first pages of an imported transcript, read backwards from the end.

Nothing is copied into the ``messages`` table: a page reads the file in
64 KiB chunks from the end (or from the cursor's offset), decodes only the
complete lines it needs, and stops once it has ``limit`` messages plus one
to know whether older ones exist. A message's ``seq`` is the byte offset of
its line, and the cursor is the offset of the oldest message shown.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.models import Message, MessageCategory, Role
from core.sources import claude, codex
from core.sources.common import as_int, clip, iso_to_us
from core.sources.lines import BackwardLines, BadLine, loads
from core.sources.safe_files import open_regular

_EPOCH = datetime.fromtimestamp(0, UTC)
MAX_NESTING = 24
"""Tool inputs and results are shown this many levels deep; what lies deeper is cut.

A line may nest 1,024 levels (orjson's bound): too deep for recursive code and
encoders downstream (a JSON dump, the tools' output)."""
CUT = "…"


@dataclass
class PreviewPage:
    messages: list[Message] = field(default_factory=list)
    next_offset: int | None = None  # where the next (older) page starts reading back from
    bytes_read: int = 0


def _when(value: object) -> datetime:
    us = iso_to_us(value)
    return datetime.fromtimestamp(us / 1_000_000, UTC) if us is not None else _EPOCH


def shallow(value: Any, depth: int = MAX_NESTING) -> Any:
    """``value`` with containers below ``depth`` levels replaced by ``"…"``."""
    if isinstance(value, dict):
        if depth <= 0:
            return CUT
        return {k: shallow(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth <= 0:
            return CUT
        return [shallow(v, depth - 1) for v in value]
    return value


def _compact(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(shallow(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blocks_text(content: Any, depth: int = MAX_NESTING) -> str:
    """Text of a content value: a string, or a list of blocks (text, tool results, images)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or depth <= 0:
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "tool_result":
            parts.append(_blocks_text(block.get("content"), depth - 1))
        elif kind in ("image", "input_image"):
            parts.append("[image]")
    return "\n".join(p for p in parts if p)


def claude_message(line: dict[str, Any], offset: int, conversation_id: str) -> Message | None:
    role = claude.role_of(line)
    if role is None:
        return None
    tool: dict[str, Any] | None = None
    tokens = 0
    message = line.get("message")
    message = message if isinstance(message, dict) else {}
    if role == claude.ASSISTANT:
        blocks = message.get("content")
        text = _blocks_text(blocks)
        calls = [
            {"id": b.get("id"), "name": b.get("name"), "input": b.get("input")}
            for b in blocks or ()
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        if calls:
            tool = dict(calls[0]) if len(calls) == 1 else {"calls": calls}
            if not text:
                text = "\n".join(f"{c['name']} {_compact(c['input'])}" for c in calls)
        usage = message.get("usage")
        if isinstance(usage, dict):
            tokens = as_int(usage.get("output_tokens"))
    elif role == claude.TOOL:
        results = [b for b in message.get("content") or () if isinstance(b, dict)]
        text = _blocks_text(message.get("content"))
        tool = {
            "tool_use_id": results[0].get("tool_use_id") if results else None,
            "is_error": any(bool(b.get("is_error")) for b in results),
        }
    elif line.get("type") == "system":
        meta = line.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        trigger, before = meta.get("trigger", "auto"), meta.get("preTokens", "?")
        text = f"context compacted ({trigger}, {before} tokens before)"
    elif role == claude.USER:
        text = claude.shown_user_text(claude.user_text(line))
    else:  # a compact summary
        text = _blocks_text(message.get("content"))
    uuid = line.get("uuid")
    category = _category(role, tool)
    if line.get("isCompactSummary"):
        category = MessageCategory.CONTEXT  # the conversation so far, as the agent keeps it
    return Message(
        id=uuid if isinstance(uuid, str) else f"{conversation_id}@{offset}",
        conversation_id=conversation_id,
        seq=offset,
        role=Role(role),
        content=clip(text),
        created_at=_when(line.get("timestamp")),
        token_count=tokens,
        tool=shallow(tool),
        category=category,
    )


def codex_message(
    line: dict[str, Any], offset: int, conversation_id: str, prompts_in_items: bool = False
) -> Message | None:
    role = codex.role_of(line)
    if role is None:
        return None
    if role == codex.USER and (line.get("type") == "response_item") != prompts_in_items:
        return None  # each prompt is shown once: from its event, or from its item
    payload = line.get("payload")
    payload = payload if isinstance(payload, dict) else {}
    sub = payload.get("type")
    tool: dict[str, Any] | None = None
    if line.get("type") == "compacted":
        text = "context compacted"
        if isinstance(payload.get("message"), str) and payload["message"]:
            text += f": {payload['message']}"
    elif role == codex.USER:
        message = payload.get("message")
        if line.get("type") == "response_item":
            message = codex.user_item_text(payload)
        text = message if isinstance(message, str) else ""
    elif sub == "message":
        text = _blocks_text(payload.get("content"))
    elif role == codex.TOOL:
        output = payload.get("output")
        if isinstance(output, dict):
            output = output.get("content", output.get("output", output))
        text = output if isinstance(output, str) else _blocks_text(output) or _compact(output, 2000)
        tool = {"call_id": payload.get("call_id")}
    else:  # a call: function, custom tool, shell, web search
        name = payload.get("name") or sub
        args = payload.get("arguments", payload.get("input", payload.get("action")))
        tool = {"name": name, "call_id": payload.get("call_id"), "arguments": args}
        text = f"{name} {_compact(args)}" if args is not None else str(name)
    category = _category(role, tool)
    if line.get("type") == "compacted" and isinstance(payload.get("message"), str):
        category = MessageCategory.CONTEXT  # the summary the conversation goes on from
    return Message(
        id=f"{conversation_id}@{offset}",
        conversation_id=conversation_id,
        seq=offset,
        role=Role(role),
        content=clip(text or ""),
        created_at=_when(line.get("timestamp")),
        tool=shallow(tool),
        category=category,
    )


def _category(role: str, tool: dict[str, Any] | None) -> MessageCategory:
    """What an imported message is for (seed 004), decided on read: a compaction
    note is system, tool calls and results are tools, the rest dialog (a compact
    summary, context, is marked by the caller)."""
    if role == claude.SYSTEM:
        return MessageCategory.SYSTEM
    if role == claude.TOOL or tool is not None:
        return MessageCategory.TOOLS
    return MessageCategory.DIALOG


Converter = Callable[[dict[str, Any], int, str], "Message | None"]


def converter(source: str, prompts_in_items: bool = False) -> Converter:
    """The line-to-message function of an agent's transcript format."""
    if source == claude.SOURCE:
        return claude_message
    return functools.partial(codex_message, prompts_in_items=prompts_in_items)


def read_page(
    path: str,
    source: str,
    conversation_id: str,
    limit: int,
    before: int | None = None,
    prompts_in_items: bool = False,
) -> PreviewPage:
    """The ``limit`` newest messages before byte offset ``before`` (the end when None).

    ``prompts_in_items``: take a Codex rollout's prompts from its user response
    items (``codex exec`` writes no user_message events).
    """
    convert = converter(source, prompts_in_items)
    page = PreviewPage()
    if before == 0:
        return page
    found: list[Message] = []
    with open_regular(path) as f:  # a FIFO or device there now is an OSError, not a hang
        reader = BackwardLines(f, before)
        for offset, raw in reader:
            if raw is None:
                continue  # over the line cap: skipped, never buffered whole
            try:
                message = convert(loads(raw), offset, conversation_id)
            except (BadLine, ValueError, TypeError, KeyError, AttributeError, RecursionError):
                continue  # a line we cannot show is not a reason to show nothing
            if message is None:
                continue
            found.append(message)
            if len(found) > limit:
                break
        page.bytes_read = reader.bytes_read
    page.messages = found[:limit]
    if len(found) > limit:
        page.next_offset = page.messages[-1].seq
    return page
