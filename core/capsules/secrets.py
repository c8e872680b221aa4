"""The capsule secret lint: every credential a capsule holds, by line, and its redaction.

A capsule is pasted into another agent's first prompt and kept on disk next to the
code, so a key in it leaks twice. What counts as a secret is the rule set every
other path uses (:mod:`core.secret_rules`: providers' keys, JWTs, webhook URLs,
``Bearer`` credentials, private key blocks, passwords in URLs and prose,
``.env``-style assignments of secret names, and random-looking tokens with no name
around them), so what the lint flags is exactly what redaction masks.

What capsules cite by design is never flagged: hex digests (commit and blob ids,
UUIDs), the ids agents give messages, tool calls and requests (``msg_…``, ``toolu_…``,
``call_…``, ``req_…``: a transcript highlight names its message) and URLs' paths.
"""

from __future__ import annotations

from core.documents.problems import Problem
from core.secret_rules import KINDS, REDACTED, Span, find_spans

__all__ = ["redact_capsule", "secret_problems"]


def _findings(text: str) -> list[Span]:
    """Every secret in ``text`` as ``(start, end, kind)``, in order."""
    return find_spans(text)


def secret_problems(text: str) -> list[Problem]:
    """One problem per secret in a capsule's text (front matter included), by line.

    Codes are ``secret_<kind>`` (``secret_openai_key``, ``secret_url_password``,
    ``secret_high_entropy``...); the message names the kind, never the value.
    """
    problems = []
    for start, _end, kind in _findings(text):
        line = text.count("\n", 0, start) + 1
        what = KINDS.get(kind, "a secret")
        problems.append(
            Problem(
                line=line,
                code=f"secret_{kind}",
                message=(
                    f"this line holds {what}; remove it, or replace every secret "
                    f"with {REDACTED} (`delegate capsule check --redact`)"
                ),
            )
        )
    return problems


def redact_capsule(text: str) -> str:
    """``text`` with every secret :func:`secret_problems` reports replaced by
    ``[REDACTED]`` (names, schemes and URL users kept); idempotent."""
    pieces: list[str] = []
    position = 0
    for start, end, _kind in _findings(text):
        if start < position:
            continue  # inside a span already masked
        pieces.append(text[position:start])
        pieces.append(REDACTED)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
