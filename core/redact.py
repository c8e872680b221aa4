"""Mask secrets before anything is stored, indexed or shown.

Agent output, agent stderr, error messages, history rows, imported transcript
messages and config values can all carry credentials: a CLI that echoes its
environment, a connection error that quotes ``http://user:pass@host``, a pasted
``.env``. Every path that stores or shows such text calls :func:`redact`; lints
that report rather than mask call :func:`find_secrets`. What counts as a secret
is decided in one place, :mod:`core.secret_rules` (shared with the capsule lint);
this module applies it, line by line where it can, so a long text costs little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.secret_rules import REDACTED, find_spans, hit_positions

__all__ = ["REDACTED", "Finding", "find_secrets", "redact", "redact_data"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in a text: its 1-based line, what it looks like, where it is."""

    line: int
    kind: str
    span: tuple[int, int]  # character offsets into the whole text, end exclusive


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, overlapping hits merged into one."""
    findings = []
    line, counted_to = 1, 0
    for start, end, kind in find_spans(text):
        line += text.count("\n", counted_to, start)
        counted_to = start
        findings.append(Finding(line=line, kind=kind, span=(start, end)))
    return findings


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED]`` (names and schemes kept).

    Every rule but a key block matches within one line, so a long text is redacted
    line by line, and only the lines where :func:`~core.secret_rules.hit_positions`
    finds something are judged (a reply that says "token" once is one line of work).
    """
    if not text:
        return text
    needed, multiline = hit_positions(text)
    if not needed:
        return text
    if multiline or "\n" not in text:
        return _redact_whole(text)
    # Split at "\n" only: the rules' values may hold other line breaks ("\r", U+2028).
    # Only the lines around the hits are read again; the rest is copied.
    pieces: list[str] = []
    copied = 0
    for at in needed:
        if at < copied:
            continue  # on a line already redacted
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        pieces.append(text[copied:start])
        pieces.append(_redact_whole(text[start:end]))
        copied = end
    pieces.append(text[copied:])
    return "".join(pieces)


def _redact_whole(text: str) -> str:
    findings = find_secrets(text)
    if not findings:
        return text
    pieces: list[str] = []
    position = 0
    for finding in findings:
        start, end = finding.span
        pieces.append(text[position:start])
        pieces.append(REDACTED)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def redact_data(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, strings, numbers) with every string redacted.

    For payloads about to be printed or returned by a tool: masking the decoded
    strings keeps the JSON valid, which masking its text would not.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item) for item in value]
    return value
