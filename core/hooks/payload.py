"""What an agent's hook passes delegate, read within bounds: size, encoding, nesting.

A hook's input comes from another program (Claude Code's stdin, Codex's last
argument) and must never cost delegate more than a glance: it is refused past
:data:`MAX_PAYLOAD_BYTES`, when it is not UTF-8, when it nests deeper than
:data:`MAX_DEPTH` (judged on the raw text before ``json.loads`` recurses into it),
when it is not JSON, or when it is not one JSON object. Every refusal is a
:class:`~core.errors.HookInputRefused` whose message says which.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import IO, Any

from core.errors import HookInputRefused

MAX_PAYLOAD_BYTES = 1024 * 1024
"""A hook's input larger than this is refused (Claude Code sends a few hundred bytes; a
hand-off reply in ``last_assistant_message`` a few kilobytes)."""
MAX_DEPTH = 64
"""Deeper nesting is refused before parsing (the agents' payloads nest three levels)."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def read_bounded(stream: IO[bytes], limit: int = MAX_PAYLOAD_BYTES) -> bytes:
    """At most ``limit + 1`` bytes of ``stream`` (one more than allowed tells "too large"
    without reading a flood to its end)."""
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = stream.read(min(left, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def nesting_depth(text: str) -> int:
    """How deep ``[``/``{`` nest in JSON text, strings left out (linear, no recursion)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


def parse_payload(data: bytes | str, *, limit: int = MAX_PAYLOAD_BYTES) -> dict[str, Any]:
    """The hook's JSON object, or :class:`HookInputRefused` saying why not."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            raise HookInputRefused("the hook's input is not UTF-8 text") from None
    if len(data) > limit:
        raise HookInputRefused(f"the hook's input is larger than {limit:,} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HookInputRefused(f"the hook's input is not UTF-8 (byte {exc.start})") from None
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise HookInputRefused(
            f"the hook's input nests {depth:,} levels deep (at most {MAX_DEPTH})"
        )
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        raise HookInputRefused("the hook's input is not JSON") from None
    if not isinstance(payload, dict):
        raise HookInputRefused("the hook's input is not a JSON object")
    return payload
