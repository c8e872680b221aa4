"""Secrets recognised by their context: the credential after a scheme, a URL's password,
a secret-named setting's value, a cookie, a signed URL, a password named in prose.

The name, the scheme and the user stay visible; only the value is a span.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from core.secrets.kinds import Span

# ``Bearer <token>`` anywhere; ``Basic <base64>`` anywhere. The group is the credential.
_AUTH_SCHEME = re.compile(r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/-]{8,}=*)")
# ``Authorization: <scheme> <credential>`` for any other scheme (``token``, ``Digest``...).
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"[A-Za-z-]+[ \t]+([^\s\"'\\,]{4,})"
)
# ``scheme://user:password@host``: the group is the password.
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s/:@?#]{0,200}:([^\s/@?#]{1,200})@")
# ``scheme://TOKEN@host``: a user name that is a token (git remotes carry them).
_URL_TOKEN_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://([A-Za-z0-9_-]{20,200})@")
# ``NAME = value`` / ``"name": "value"`` / ``--name value``: the name is checked by
# :func:`is_secret_name`; quoted values may hold spaces, bare values may not. A quote
# may be escaped (JSON inside a JSON string: ``{\"password\": \"…\"}``).
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?:--)?\\?[\"']?((?:[A-Za-z_][\w.-]{0,80}?)?"
    r"(?i:key|token|secret|pass(?:word|wd|phrase|code)?|pwd|credentials?|auth)(?![\w.-]))"
    # Only the name is consumed (the rest is a lookahead), so ``export NAME=...``
    # still finds ``NAME`` after trying ``export``.
    r"(?=\\?[\"']?(?:[ \t]*(?::=|[:=])[ \t]*|(?<=[A-Za-z0-9])[ \t]+(?=\S))"
    r"(?:\\?\"([^\"\n\\]{1,500})\\?\"|'([^'\n]{1,500})'"
    r"|([^\s\"'`,;()\[\]{}<>=\\]{3,200}=*)(?![\w.]*\()))"
)
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "passcode",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "auth",
    }
)
# Words that make the *value* a placeholder, not a secret.
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:\[REDACTED\]|\*+|x{3,}|<[^>]*>|\$\{?\w+\}?|\{\{[^}]*\}\}|none|null|nil|true|false|"
    r"undefined|changeme|redacted|example|os\.environ.*|process\.env.*|env\..*)$"
)
# ``the password is hunter2`` / ``my API token was 'x9…'``: a secret named in prose
# (``=`` and ``:`` are assignments, judged by their own rule).
_PROSE = re.compile(
    r"(?i)\b(?:password|passphrase|passwd|passcode|pass ?word|pwd|secret|"
    r"(?:api|access|secret|private|auth)[ _-]?(?:key|token)|token)s?"
    # "the password for the admin panel is ...": a few words may come between.
    r"(?:[ \t]+(?:for|of|on|to|in)\b[^\n.;:!?]{1,60}?)?"
    r"[ \t]+(?:is|was|would be|will be|is set to|set to|became|->)[ \t]*:?[ \t]+"
    r"(?:now[ \t]+|still[ \t]+)?"
    r"([\"'`\u201c]?)([^\s\"'`\u201d]{4,200})"
)
_TRAILING = ".,;:!?)]}"
# A cookie header, or a cookie passed to curl: every ``name=value`` after it.
_COOKIE = re.compile(r"(?i)(?:\b(?:set-)?cookie\\?[\"']?[ \t]*[:=]|(?<!\w)(?:-b|--cookie)[ \t]+)")
_COOKIE_PAIR = re.compile(
    r"[ \t]*\\?[\"']?([!#$%&'*+.^_`|~0-9A-Za-z-]{1,80})=([^;\s\"',\\]{1,4000})"
)
_COOKIE_ATTRIBUTES = frozenset(
    {
        "path",
        "domain",
        "expires",
        "max-age",
        "samesite",
        "secure",
        "httponly",
        "priority",
        "version",
    }
)
_COOKIE_SECRET_WORDS = (
    "sess",
    "sid",
    "token",
    "auth",
    "jwt",
    "csrf",
    "xsrf",
    "remember",
    "login",
    "key",
    "secret",
    "pass",
    "cred",
    "user",
)
# A signed URL's signature or session token (``?sig=``, ``X-Amz-Signature=``...).
_SIGNED_URL = re.compile(
    r"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|"
    r"x-goog-credential|code_verifier|client_secret)=([^&\s#\"'<>]{8,})"
)
# ``curl -u user:password`` / ``--user user:password``: the group is the password.
_CURL_USER = re.compile(
    r"(?<![\w-])(?:-u|--user)(?:[ \t]+|=)[\"']?[^\s:\"']{1,100}:([^\s\"']{1,200})"
)
# ``<add key="ClearTextPassword" value="…" />`` (NuGet, .NET configs).
_XML_VALUE = re.compile(
    r"(?i)<add[ \t]+key=[\"'][^\"']{0,80}(?:password|secret|token|apikey|api_key)[\"'][ \t]+"
    r"value=[\"']([^\"']{1,500})[\"']"
)


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
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


def _looks_like_credential(value: str) -> bool:
    """A bare word after "the password is": a credential has a digit, a symbol, inner
    capitals or three hyphenated words; a name (``config.api_token``) or a word does not."""
    if len(value) < 4 or _NOT_A_VALUE.match(value):
        return False
    if any(c in value for c in "([{$") or value.startswith(("os.", "process.", "~/", "./", "/")):
        return False  # code or a path, not a value
    if any(c.isdigit() for c in value) or any(not c.isalnum() and c not in "._-/" for c in value):
        return True
    return any(c.isupper() for c in value[1:]) or value.count("-") >= 2


def auth_spans(text: str, folded: str) -> Iterator[Span]:
    if "bearer" in folded or "basic" in folded:
        for match in _AUTH_SCHEME.finditer(text):
            value = match.group(1)
            if len(value) >= 16 or any(c.isdigit() or c == "=" for c in value):
                yield match.start(1), match.end(1), "auth_credential"
    if "authorization" in folded:
        for match in _AUTH_HEADER.finditer(text):
            yield match.start(1), match.end(1), "auth_credential"


def url_spans(text: str, folded: str) -> Iterator[Span]:
    for match in _URL_USERINFO.finditer(text):
        yield match.start(1), match.end(1), "url_password"
    for match in _URL_TOKEN_USER.finditer(text):
        user = match.group(1)
        if any(c.isdigit() for c in user) and any(c.isalpha() for c in user):
            yield match.start(1), match.end(1), "url_password"
    if "=" in folded:
        for match in _SIGNED_URL.finditer(text):
            yield match.start(1), match.end(1), "signed_url"


def assignment_spans(text: str, folded: str) -> Iterator[Span]:
    for match in _ASSIGNMENT.finditer(text):
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        value = match.group(group)
        if not is_secret_name(match.group(1)) or _NOT_A_VALUE.match(value.strip()):
            continue
        # ``token counting`` / ``password reset`` in prose: a bare value after a space
        # (no ``=`` or ``:``) only counts when it looks like a credential.
        separator = text[match.end(1) : match.start(group)]
        if group == 4 and not re.search(r"[:=]", separator) and not _looks_random_word(value):
            continue
        yield match.start(group), match.end(group), "secret_assignment"
    if "<add" in folded:
        for match in _XML_VALUE.finditer(text):
            yield match.start(1), match.end(1), "secret_assignment"
    if "-u" in folded or "--user" in folded:
        for match in _CURL_USER.finditer(text):
            yield match.start(1), match.end(1), "url_password"


def _looks_random_word(value: str) -> bool:
    return len(value) >= 8 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def prose_spans(text: str) -> Iterator[Span]:
    for match in _PROSE.finditer(text):
        quote, value = match.group(1), match.group(2)
        start, end = match.start(2), match.end(2)
        while end > start and text[end - 1] in _TRAILING and not quote:
            end -= 1
        value = text[start:end]
        quoted = quote in ('"', "'", "\u201c") and not _NOT_A_VALUE.match(value)
        if (quoted and len(value) >= 4) or _looks_like_credential(value):
            yield start, end, "secret_in_prose"


def cookie_spans(text: str) -> Iterator[Span]:
    for header in _COOKIE.finditer(text):
        position = header.end()
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        while position < line_end:
            pair = _COOKIE_PAIR.match(text, position, line_end)
            if pair is None:
                break
            name, value = pair.group(1).lower(), pair.group(2)
            secret_name = any(word in name for word in _COOKIE_SECRET_WORDS)
            if name not in _COOKIE_ATTRIBUTES and (
                (secret_name and len(value) >= 4 and not _NOT_A_VALUE.match(value))
                or (len(value) >= 16 and _looks_random_word(value))
            ):
                yield pair.start(2), pair.end(2), "cookie_value"
            position = pair.end()
            while position < line_end and text[position] in ";, \t":
                position += 1
