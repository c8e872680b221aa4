"""Find and mask secrets before anything is stored or shown.

Agent output, agent stderr, error messages, history rows and config values can
all carry credentials: a CLI that echoes its environment, a connection error
that quotes ``http://user:pass@host``. Every path that stores or shows such
text calls :func:`redact`; the capsule secret lint reuses :func:`find_secrets`.

Two kinds of rules, both deliberately conservative about prose:

* **Key shapes** that are secrets wherever they appear (``sk-ant-…``,
  ``ghp_…``, ``AKIA…``, private key blocks, ...).
* **Context rules**: the credential after ``Bearer``/``Basic``, the value of an
  assignment whose *name* looks secret (``API_KEY=…``, ``"password": "…"``,
  ``--token …``) and the password in a URL's userinfo. The name, the scheme and
  the user stay visible so a person can still tell what was there.

Every pattern is linear in the input (no nested unbounded repetition that can
backtrack), so redacting a multi-megabyte reply stays cheap.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

REDACTED = "[REDACTED]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in a text: its 1-based line, what it looks like, where it is."""

    line: int
    kind: str
    span: tuple[int, int]  # character offsets into the whole text, end exclusive


# --- secrets by shape -------------------------------------------------------------

# Each rule with the (lower-case) words a text must hold for it to match: a rule
# whose words are absent is not run (most lines hold none, or one rule's).
_SHAPES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----"
            r".*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|\Z)",
            re.DOTALL,
        ),
        ("-----begin",),
    ),
    ("anthropic_key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{8,}"), ("sk-",)),
    (
        "openai_key",
        re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
        ("sk-",),
    ),
    (
        "github_token",
        re.compile(r"(?<![\w-])(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}"),
        ("gho_", "ghp_", "ghs_", "ghu_", "ghr_"),
    ),
    ("github_token", re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{20,}"), ("github_pat_",)),
    (
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("akia", "asia"),
    ),
    ("slack_token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",)),
    ("google_api_key", re.compile(r"(?<![\w-])AIza[A-Za-z0-9_-]{35}"), ("aiza",)),
)


# --- secrets by context -----------------------------------------------------------

# ``Bearer <token>`` anywhere; ``Basic <base64>`` anywhere. The group is the credential.
_AUTH_SCHEME = re.compile(r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/-]{8,}=*)")
# ``Authorization: <scheme> <credential>`` for any other scheme (``token``, ``Digest``...).
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z-]+[ \t]+([^\s\"',]{4,})"
)
# ``scheme://user:password@host``: the group is the password.
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s/:@?#]{0,200}:([^\s/@?#]{1,200})@")
# ``NAME = value`` / ``"name": "value"`` / ``--name value``: the name is checked by
# :func:`_is_secret_name`; quoted values may hold spaces, bare values may not.
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?:--)?[\"']?((?:[A-Za-z_][\w.-]{0,80}?)?"
    r"(?i:key|token|secret|pass(?:word|wd|phrase)?|pwd|credentials?|auth)(?![\w.-]))"
    # Only the name is consumed (the rest is a lookahead), so ``export NAME=...``
    # still finds ``NAME`` after trying ``export``.
    r"(?=[\"']?(?:[ \t]*[:=][ \t]*|(?<=[A-Za-z0-9])[ \t]+(?=\S))"
    r"(?:\"([^\"\n]{1,500})\"|'([^'\n]{1,500})'|([^\s\"'`,;()\[\]{}<>=]{3,200}=*)(?![\w.]*\()))"
)
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "auth",
    }
)
# Words that make the *value* a placeholder, not a secret.
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:\[REDACTED\]|\*+|x{3,}|<[^>]*>|\$\{?\w+\}?|none|null|nil|true|false|"
    r"undefined|changeme|redacted|example|os\.environ.*|process\.env.*)$"
)


@functools.lru_cache(maxsize=1024)
def _is_secret_name(name: str) -> bool:
    """``API_KEY``, ``openai.apiKey``, ``db-password``: the last word names a secret."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace(".", "_").replace("-", "_")
    parts = [p for p in words.split("_") if p]
    if not parts:
        return False
    last = parts[-1]
    # ``--key`` alone as a CLI flag or ``key: value`` in prose is too common; ask for
    # a qualifier (``api_key``, ``SECRET_KEY``) unless the word is unambiguous.
    if last == "key":
        return len(parts) > 1
    return last in _SECRET_WORDS or "password" in last or last.endswith("token")


_SCHEME_WORDS = ("bearer", "basic")
_HEADER_WORDS = ("auth",)
_URL_WORDS = ("://",)
_ASSIGNMENT_WORDS = ("key", "token", "secret", "pass", "pwd", "credential", "auth")


def _holds(folded: str, words: tuple[str, ...]) -> bool:
    return any(word in folded for word in words)


def _by_context(text: str, folded: str) -> Iterator[tuple[str, int, int]]:
    if _holds(folded, _SCHEME_WORDS):
        for match in _AUTH_SCHEME.finditer(text):
            value = match.group(1)
            if len(value) >= 16 or any(c.isdigit() or c == "=" for c in value):
                yield "auth_credential", match.start(1), match.end(1)
    if _holds(folded, _HEADER_WORDS):
        for match in _AUTH_HEADER.finditer(text):
            yield "auth_credential", match.start(1), match.end(1)
    if _holds(folded, _URL_WORDS):
        for match in _URL_USERINFO.finditer(text):
            yield "url_password", match.start(1), match.end(1)
    if not _holds(folded, _ASSIGNMENT_WORDS):
        return
    for match in _ASSIGNMENT.finditer(text):
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        value = match.group(group)
        if not _is_secret_name(match.group(1)) or _NOT_A_VALUE.match(value.strip()):
            continue
        # ``token counting`` / ``password reset`` in prose: a bare value after a space
        # (no ``=`` or ``:``) only counts when it looks like a credential.
        separator = text[match.end(1) : match.start(group)]
        if group == 4 and not re.search(r"[:=]", separator) and not _looks_random(value):
            continue
        yield "secret_assignment", match.start(group), match.end(group)


def _looks_random(value: str) -> bool:
    return len(value) >= 8 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, in order, overlapping hits merged into one."""
    spans: list[tuple[int, int, str]] = []
    folded = text.lower()
    for kind, pattern, words in _SHAPES:
        if _holds(folded, words):
            spans.extend((m.start(), m.end(), kind) for m in pattern.finditer(text))
    spans.extend((start, end, kind) for kind, start, end in _by_context(text, folded))
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    findings = []
    line, counted_to = 1, 0
    for start, end, kind in merged:
        if text[start:end] == REDACTED:
            continue  # already masked: redact() is idempotent, the lint stays quiet
        line += text.count("\n", counted_to, start)
        counted_to = start
        findings.append(Finding(line=line, kind=kind, span=(start, end)))
    return findings


# Every rule above needs one of these (lower-cased) in the text: most text has
# none and is returned after one scan, far cheaper than the rules (the search
# index redacts every prompt and reply it indexes).
_NEEDED = tuple(
    sorted(
        {word for _, _, words in _SHAPES for word in words}.union(
            _SCHEME_WORDS, _HEADER_WORDS, _URL_WORDS, _ASSIGNMENT_WORDS
        )
    )
)
_ANY_NEEDED = re.compile("|".join(re.escape(word) for word in _NEEDED))


def _may_hold_secret(text: str) -> bool:
    # One scan of the folded text (about twice as fast as a test per word).
    return _ANY_NEEDED.search(text.lower()) is not None


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED]`` (names and schemes kept).

    Every rule but the private key block matches within one line, so a long text
    is redacted line by line and only the lines holding a word a rule needs are
    scanned (a reply that says "token" once is one line of work, not all of it).
    """
    if not text:
        return text
    folded = text.lower()
    needed = [m.start() for m in _ANY_NEEDED.finditer(folded)]
    if not needed:
        return text
    if "\n" not in text or "-----begin" in folded:
        return _redact_whole(text)
    if len(folded) != len(text):  # a letter whose lower case is longer: positions differ
        return "\n".join(
            _redact_whole(line) if _may_hold_secret(line) else line for line in text.split("\n")
        )
    # Split at "\n" only: the rules' values may hold other line breaks ("\r", U+2028).
    # Only the lines around the words found are read again; the rest is copied.
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
