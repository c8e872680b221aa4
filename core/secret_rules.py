"""The secret rules as one set: the prefilter and :func:`find_spans`, over every family.

One rule set, used by everything that keeps secrets out of sight: redaction of what
is stored, indexed and shown (:mod:`core.redact`) and the capsule and hand-off lints
(:mod:`core.capsules.secrets`, :mod:`core.documents.handoff_template`). The kinds
follow the public rule sets of well-kept secret scanners (gitleaks' ``gitleaks.toml``,
detect-secrets' plugins); :data:`KINDS` names each kind and says what it looks like.

Four families of rules:

* **Shapes** that are secrets wherever they appear: a provider's prefix and length
  (``sk_live_…``, ``npm_…``, ``hf_…``, ``SG.….…``, ``xoxb-…``), a JWT, a private key
  block (PEM, PGP, SSH2, PuTTY), a webhook URL whose path is the secret.
* **Contexts**: the credential after ``Bearer``/``Basic`` or an ``Authorization:``
  header, a URL's password, the value of an assignment whose *name* looks secret
  (``API_KEY=…``, ``"password": "…"``, ``--token …``, ``AccountKey=…``), a cookie's
  value, a signed URL's signature, ``curl -u user:pass``, "the password is …" in
  prose. The name, the scheme and the user stay visible.
* **Bare tokens** with no name around them: a 40-character AWS secret access key,
  a 64-hex HMAC key, and any random-looking token (the high-entropy rule). Digests
  (commit ids, ``sha256:…``), ids agents mint (``msg_…``, ``toolu_…``), URL paths and
  identifiers made of words are not secrets and are left alone.

The families live in :mod:`core.secrets`, one module each; this module runs them
together and re-exports their public names.

Every rule names the literals (or a cheap pattern) a text must hold for it to be
worth running; :data:`PREFILTER` is all of them in one regex, so most text is judged
in one scan. Every pattern is linear in its input (no nested unbounded repetition).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.secrets.bare_tokens import (
    ENTROPY_SHARE,
    HIGH_ENTROPY_MIN_LENGTH,
    NOT_A_KEY,
    WORDY_SHARE,
    bare_token_spans,
    looks_random,
)
from core.secrets.contexts import (
    assignment_spans,
    auth_spans,
    cookie_spans,
    is_secret_name,
    prose_spans,
    url_spans,
)
from core.secrets.kinds import KINDS, REDACTED, Span
from core.secrets.shapes import SHAPES, Shape

__all__ = [
    "ENTROPY_SHARE",
    "HIGH_ENTROPY_MIN_LENGTH",
    "KINDS",
    "REDACTED",
    "SHAPES",
    "WORDY_SHARE",
    "Shape",
    "Span",
    "find_spans",
    "hit_positions",
    "is_secret_name",
    "looks_random",
]


# Literals the context rules need (lower case): a text holding none of them, no
# shape's literal and no bare-token candidate holds no secret.
_AUTH_WORDS = ("bearer", "basic", "authorization")
_URL_WORDS = ("://", "sig=", "signature=", "x-amz-", "x-goog-", "client_secret=", "code_verifier=")
_ASSIGNMENT_WORDS = (
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "credential",
    "auth",
    "<add",
    "-u ",
    "--user",
)
_PROSE_WORDS = ("pass", "pwd", "secret", "key", "token")
_COOKIE_WORDS = ("cookie", "-b ", "--cookie")


def _literal_trie(words: Iterable[str]) -> str:
    """One regex matching any of ``words``, factored by common prefixes (Python's
    engine tries alternatives one by one; a trie tries each character once)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + render(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return render(trie)


_LITERALS = sorted(
    {w for shape in SHAPES for w in shape.needs}.union(
        _AUTH_WORDS, _URL_WORDS, _ASSIGNMENT_WORDS, _PROSE_WORDS, _COOKIE_WORDS
    )
)
_LITERAL = re.compile(f"(?=({_literal_trie(_LITERALS)}))")
"""Any rule's literal in the lower-cased text, one scan for all of them (a lookahead,
so a literal that starts inside another one is found too)."""
_MULTILINE = tuple(w for shape in SHAPES if shape.multiline for w in shape.needs)

# The prefilter, in two cheap scans. Most shapes' secrets are a long run of key
# characters (20 or more) starting with the shape's literal, so looking at the
# few long runs a text holds finds them; the other literals (context words, and
# shape literals that stand outside such a run: ``sg.``, ``hooks.slack.com``,
# ``-----begin``) are scanned for in the lower-cased text.
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/_-")
_RUN = re.compile(r"[A-Za-z0-9+/_-]{20,}")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
).fullmatch
_IN_RUN = sorted(
    {
        w
        for shape in SHAPES
        if not shape.multiline
        for w in shape.needs
        if set(w) <= _RUN_CHARS and len(w) >= 3
    }
    - {"sk-"}  # ``sk-ant-`` keys may be shorter than a run
)
_RUN_LITERAL = re.compile(_literal_trie(_IN_RUN))
# ``://`` is in every URL; only one with a user (``://user:pass@``, ``://TOKEN@``)
# may hold a URL rule's secret, and ``sig=``-style parameters are scanned for.
_SCAN = re.compile(_literal_trie(sorted(set(_LITERALS) - set(_IN_RUN) - {":a", "://"})))
_USERINFO = re.compile(r"://[^\s/@?#]{1,400}@")
_HAS_UPPER = re.compile(r"[A-Z]").search
_HAS_LOWER = re.compile(r"[a-z]").search
_ALL_HEX = re.compile(r"[0-9a-fA-F]+").fullmatch


_HAS_DIGIT = re.compile(r"[0-9]").search


def _worth_a_look(run: str) -> bool:
    """Whether a long run of key characters may be or hold a secret: it has a shape's
    literal, or it is 64 hex digits, or it mixes digits and both cases (what every
    bare-token rule and literal-less shape asks) and is not an id (a UUID, an agent's)."""
    if not _HAS_DIGIT(run):
        return _RUN_LITERAL.search(run.lower()) is not None
    if NOT_A_KEY.match(run) or _UUID(run):
        return False
    if _RUN_LITERAL.search(run.lower()):
        return True
    if _ALL_HEX(run):
        return len(run) == 64 or run.startswith("SK")  # else a commit id or a digest
    return bool(_HAS_UPPER(run) and _HAS_LOWER(run))


def _fold(text: str) -> str:
    """``text`` in lower case, each character where it was (``İ`` would grow)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def hit_positions(text: str) -> tuple[list[int], bool]:
    """Where in ``text`` a rule may find a secret (sorted), and whether one of them
    spans lines (a key block: the text must be judged whole). No position: no secret."""
    folded = _fold(text)
    found = [m.start() for m in _SCAN.finditer(folded)]
    if "://" in text:
        found.extend(m.start() for m in _USERINFO.finditer(text))
    found.extend(m.start() for m in _RUN.finditer(text) if _worth_a_look(m.group()))
    if not found:
        return found, False
    found.sort()
    return found, any(word in folded for word in _MULTILINE)


def _hits(folded: str) -> frozenset[str]:
    """The literals ``folded`` holds, each hit standing for every literal inside it too
    (a match of ``sk-ant-`` is one of ``sk-`` as well)."""
    return frozenset(m.group(1) for m in _LITERAL.finditer(folded))


# Shapes by the literals that let them run; a literal also stands for those inside it.
_SHAPES_BY_LITERAL: dict[str, tuple[int, ...]] = {
    word: tuple(i for i, shape in enumerate(SHAPES) if any(need in word for need in shape.needs))
    for word in _LITERALS
}
_ALWAYS = tuple(i for i, shape in enumerate(SHAPES) if not shape.needs)


def _has(hits: frozenset[str], words: tuple[str, ...]) -> bool:
    return any(need in hit for hit in hits for need in words)


def find_spans(text: str) -> list[Span]:
    """Every secret in ``text`` as ``(start, end, kind)``, in order, overlaps merged."""
    folded = _fold(text)
    hits = _hits(folded)
    spans: list[Span] = []
    chosen = sorted({i for hit in hits for i in _SHAPES_BY_LITERAL.get(hit, ())}.union(_ALWAYS))
    for index in chosen:
        shape = SHAPES[index]
        group = shape.group
        spans.extend(
            (m.start(group), m.end(group), shape.kind) for m in shape.pattern.finditer(text)
        )
    if hits:
        if _has(hits, _AUTH_WORDS):
            spans.extend(auth_spans(text, folded))
        if _has(hits, _URL_WORDS):
            spans.extend(url_spans(text, folded))
        if _has(hits, _ASSIGNMENT_WORDS):
            spans.extend(assignment_spans(text, folded))
        if _has(hits, _PROSE_WORDS):
            spans.extend(prose_spans(text))
        if _has(hits, _COOKIE_WORDS):
            spans.extend(cookie_spans(text))
    if any(_worth_a_look(m.group()) for m in _RUN.finditer(text)):
        spans.sort()
        spans.extend(bare_token_spans(text, [(s, e) for s, e, _ in spans]))
    spans.sort()
    merged: list[Span] = []
    for start, end, kind in spans:
        if start >= end:
            continue
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    # Already masked: redaction is idempotent, the lints stay quiet.
    return [span for span in merged if text[span[0] : span[1]] != REDACTED]
