"""Keys with no name around them: an AWS secret access key, a 64-hex HMAC key, and any
random-looking token (the high-entropy rule), minus digests, minted ids, URL paths and
identifiers made of words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from core.secrets.kinds import Span

HIGH_ENTROPY_MIN_LENGTH = 20
"""Shorter tokens are too often words, versions or ids to judge by their letters."""
ENTROPY_SHARE = 0.8
"""A token's Shannon entropy per character must be at least this share of the most
its length allows (log2 of the length): random keys reach it 85-90% of the time."""
WORDY_SHARE = 0.5
"""A token at least this share made of words (``Server``, ``config``) is an
identifier (``HTTP2ServerConfigV3Builder``), not a key."""

# A run of characters a key or a base64 blob is made of, not touching another one.
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouy]").search
_FOUR_CONSONANTS = re.compile(r"[^aeiouy]{4}").search
# Ids agents and their APIs generate (random, and quoted on purpose), and digests
# named by their algorithm: not secrets.
NOT_A_KEY = re.compile(
    r"(?:msg|toolu|srvtoolu|call|req|resp|rs|fc|chatcmpl|sha1|sha256|sha384|sha512)[_-]"
)
# A URL up to its query: its path may look random (``/status/1977645937225822664``,
# a package's content hash) and a secret in its query is a ``key=value`` the
# context rules find.
_URL_PATH = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s?#\"'<>()\[\]]+")
_HEX = frozenset("0123456789abcdefABCDEF")
# What names a hex run a digest rather than a key, just before it.
_DIGEST_WORDS = (
    "sha",
    "digest",
    "hash",
    "checksum",
    "integrity",
    "commit",
    "blob",
    "tree",
    "oid",
    "etag",
    "fingerprint",
    "object",
)


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
    return _wordy(letters) < WORDY_SHARE * size


def _wordy(token: str) -> int:
    """How many of ``token``'s letters are in words (``Server``, ``config``): runs of
    small letters, capitalised or not, that have a vowel and no four consonants in a
    row (a random run like ``ldnbce`` is no word)."""
    count = 0
    for match in _WORD_RUN.finditer(token):
        word = match.group().lower()
        if _VOWEL(word) and not _FOUR_CONSONANTS(word):
            count += len(word)
    return count


def _aws_secret(token: str) -> bool:
    """40 characters of base64 with mixed case and digits, not a path of words."""
    if len(token) != 40 or "_" in token or "-" in token or all(c in _HEX for c in token):
        return False
    if not (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    ):
        return False
    return not _path_like(token)


def _path_like(token: str) -> bool:
    """``Users/me/Projects2``, ``tmpTdpm3M/lib/python3``: most parts are words (a
    ``+`` is base64's, never a path's)."""
    if "+" in token:
        return False
    parts = [p for p in token.split("/") if len(p) >= 3]
    words = sum(1 for p in parts if p.isdigit() or _wordy(p) * 2 >= len(p))
    return bool(parts) and words * 2 >= len(parts)


def _hex_secret(text: str, start: int, token: str) -> bool:
    """64 hex digits (an HMAC or signing key) not named a digest just before."""
    if len(token) != 64 or not all(c in _HEX for c in token):
        return False
    if token.isdigit() or not any(c.isdigit() for c in token):
        return False
    before = text[max(0, start - 24) : start].lower()
    after = text[start + 64 : start + 66]
    return not any(word in before for word in _DIGEST_WORDS) and after != "  "


def bare_token_spans(text: str, taken: list[tuple[int, int]]) -> Iterator[Span]:
    """Keys with no name around them, outside the spans already found and URL paths."""
    urls = [m.span() for m in _URL_PATH.finditer(text)] if "://" in text else []
    skip = sorted(taken + urls)
    # Tokens come in order: one pass over the sorted skip spans keeps a pasted
    # megabyte linear (the editor checks as a person types).
    reach, next_skip = -1, 0
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        while next_skip < len(skip) and skip[next_skip][0] < end:
            reach = max(reach, skip[next_skip][1])
            next_skip += 1
        if reach > start:
            continue  # overlaps a span that starts before the token ends
        token = match.group()
        if NOT_A_KEY.match(token):
            continue
        if _hex_secret(text, start, token):
            yield start, end, "hex_secret"
        elif _aws_secret(token):
            yield start, end, "aws_secret_access_key"
        elif looks_random(token) and not ("/" in token and _path_like(token)):
            yield start, end, "high_entropy"
