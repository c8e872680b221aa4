"""The capsule secret lint: every credential a capsule holds, by line, and its redaction.

A capsule is pasted into another agent's first prompt and kept on disk next to the
code, so a key in it leaks twice. The shapes and context rules are the shared ones
of :mod:`core.redact` (providers' keys, ``Bearer`` credentials, private key blocks,
passwords in URLs, ``.env``-style assignments of secret names); a capsule adds one
rule the rest of the app cannot afford: **high-entropy strings**, random-looking
tokens with no name around them. Redacting every history row with that rule would
mask too much, but a capsule is short and a person reviews what it flags.

What capsules cite by design is never flagged: hex digests (commit and blob ids,
UUIDs), the ids agents give messages, tool calls and requests (``msg_…``, ``toolu_…``,
``call_…``, ``req_…``: a transcript highlight names its message) and URLs' paths.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from core.documents.problems import Problem
from core.redact import REDACTED, find_secrets

HIGH_ENTROPY_MIN_LENGTH = 20
"""Shorter tokens are too often words, versions or ids to judge by their letters."""
ENTROPY_SHARE = 0.8
"""A token's Shannon entropy per character must be at least this share of the most
its length allows (log2 of the length): random keys reach it 85-90% of the time."""
WORDY_SHARE = 0.5
"""A token at least this share made of letter runs (``Server``, ``HTTP``) is an
identifier (``HTTP2ServerConfigV3Builder``), not a key."""

# A run of characters a key or a base64 blob is made of, not touching another one.
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_WORD_RUN = re.compile(r"[a-z]{3,}|[A-Z]{3,}")
# Ids agents and their APIs generate (random, and quoted on purpose): not secrets.
_AGENT_ID = re.compile(r"(?:msg|toolu|srvtoolu|call|req|resp|rs|fc|chatcmpl)[_-]")
# A URL up to its query: its path may look random (``/status/1977645937225822664``)
# and a secret in its query is a ``key=value`` the context rules find.
_URL_PATH = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s?#\"'<>()\[\]]+")

# What each kind looks like, for the message (the secret itself is never quoted).
_DESCRIPTIONS = {
    "private_key": "a private key block",
    "anthropic_key": "an Anthropic API key",
    "openai_key": "an OpenAI API key",
    "github_token": "a GitHub token",
    "aws_access_key_id": "an AWS access key id",
    "slack_token": "a Slack token",
    "google_api_key": "a Google API key",
    "auth_credential": "an Authorization credential (Bearer, Basic or token)",
    "url_password": "a password in a URL",
    "secret_assignment": "the value of a secret-named setting (key, token, password...)",
    "high_entropy": "a random-looking string (a key or token without a name)",
}


def looks_random(token: str) -> bool:
    """Whether ``token`` looks like a generated key: mixed case and digits, close to
    the most entropy its length allows, and not made of words."""
    letters = token.rstrip("=")
    if len(letters) < HIGH_ENTROPY_MIN_LENGTH:
        return False
    if not (
        any(c.isdigit() for c in letters)
        and any(c.isupper() for c in letters)
        and any(c.islower() for c in letters)
    ):
        return False  # hex digests, snake_case names, ALL_CAPS constants
    counts = Counter(letters)
    size = len(letters)
    entropy = -sum(n / size * math.log2(n / size) for n in counts.values())
    if entropy < ENTROPY_SHARE * math.log2(size):
        return False
    wordy = sum(len(run) for run in _WORD_RUN.findall(letters))
    return wordy < WORDY_SHARE * size


def _high_entropy_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Random-looking tokens in ``text`` outside the spans already found and URLs."""
    urls = [m.span() for m in _URL_PATH.finditer(text)] if "://" in text else []
    skip = sorted(taken + urls)
    # Tokens come in order: one pass over the sorted skip spans keeps a pasted
    # megabyte linear (the editor checks as a person types).
    reach, next_skip = -1, 0
    spans = []
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        while next_skip < len(skip) and skip[next_skip][0] < end:
            reach = max(reach, skip[next_skip][1])
            next_skip += 1
        if reach > start:
            continue  # overlaps a span that starts before the token ends
        if _AGENT_ID.match(match.group()):
            continue
        if looks_random(match.group()):
            spans.append((start, end))
    return spans


def _findings(text: str) -> list[tuple[int, int, str]]:
    """Every secret in ``text`` as ``(start, end, kind)``, in order."""
    found = [(f.span[0], f.span[1], f.kind) for f in find_secrets(text)]
    taken = [(start, end) for start, end, _ in found]
    found.extend((start, end, "high_entropy") for start, end in _high_entropy_spans(text, taken))
    return sorted(found)


def secret_problems(text: str) -> list[Problem]:
    """One problem per secret in a capsule's text (front matter included), by line.

    Codes are ``secret_<kind>`` (``secret_openai_key``, ``secret_url_password``,
    ``secret_high_entropy``...); the message names the kind, never the value.
    """
    problems = []
    for start, _end, kind in _findings(text):
        line = text.count("\n", 0, start) + 1
        what = _DESCRIPTIONS.get(kind, "a secret")
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
