"""The search box's query language, parsed into terms and filters.

::

    words            every word must appear (in any one message or the title)
    "a phrase"       these words, in this order
    pref*            any word starting with ``pref`` (also ``"two wor"*``)
    agent:codex      the agent id starts with this
    state:ready      the session's state (idle, running, pending, ready, handed_off),
                     or state:archived: the archive is searched too
    branch:fix       the git branch contains this
    cwd:api          the working folder contains this
    key:"a b"        a filter value with spaces

Nothing typed is ever syntax for SQLite: each term becomes one double-quoted
FTS5 string (its quotes doubled), so ``OR``, ``NEAR(``, ``*`` or a stray quote
are words to look for. An unterminated quote runs to the end. What cannot be
searched for is an :class:`~core.errors.InvalidRequest` naming what to change.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from core.errors import InvalidRequest
from core.models import SessionState

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
FILTER_KEYS = ("agent", "state", "branch", "cwd")
ARCHIVED = "archived"
"""``state:archived``: archived sessions, whatever the scope says about the archive."""
STATES = (*(s.value for s in SessionState), ARCHIVED)

_FILTER = re.compile(r"(agent|state|branch|cwd):", re.IGNORECASE)
# Lone surrogates cannot be encoded for SQLite; control characters are never text to
# find; U+E000 separates the texts of an indexed part (core.sources.texts.SEPARATOR).
_UNUSABLE = re.compile(r"[\ud800-\udfff\x00-\x08\x0b-\x1f\x7f\ue000]")


@dataclass(frozen=True, slots=True)
class Term:
    """One word or phrase to find; ``prefix``: its last word may continue."""

    text: str
    prefix: bool = False

    def fts(self) -> str:
        """This term as one FTS5 string: data, never syntax."""
        quoted = '"' + self.text.replace('"', '""') + '"'
        return f"{quoted} *" if self.prefix else quoted


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """What a query asks for: terms (all must match) and filters (AND across keys, OR within)."""

    terms: tuple[Term, ...] = ()
    filters: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def match_expression(self) -> str | None:
        """The FTS5 MATCH argument, or None when the query only filters."""
        if not self.terms:
            return None
        return " ".join(t.fts() for t in self.terms)

    def key(self, scope: str = "") -> str:
        """A short fingerprint: a page cursor is valid only for the query and scope that made it."""
        canonical = repr((self.match_expression(), sorted(self.filters.items()), scope))
        return hashlib.blake2b(canonical.encode(), digest_size=8).hexdigest()


def _searchable(text: str) -> bool:
    """Whether the tokenizer finds a word in ``text`` (letters or digits)."""
    return any(ch.isalnum() for ch in text)


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """The text of a quoted string opening at ``text[i]``, and the index after it."""
    end = text.find('"', i + 1)
    if end < 0:
        return text[i + 1 :], len(text)
    return text[i + 1 : end], end + 1


def _read_word(text: str, i: int) -> tuple[str, int]:
    end = i
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[i:end], end


def _filter_value(key: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise InvalidRequest(f"filter {key}: needs a value, e.g. {key}:{_EXAMPLES[key]}")
    if key == "state":
        state = value.casefold()
        if state not in STATES:
            raise InvalidRequest(
                f"state:{value} is not a session state; use one of {', '.join(STATES)}"
            )
        return state
    return value.casefold()


_EXAMPLES = {"agent": "codex", "state": "ready", "branch": "main", "cwd": "api"}


def parse_query(text: str) -> ParsedQuery:
    """Parse what a person typed; see the module docstring for the language."""
    if not isinstance(text, str):
        raise InvalidRequest("query must be text")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"query is {len(text):,} characters long; keep it under {MAX_QUERY_CHARS:,}"
        )
    text = _UNUSABLE.sub(" ", text)
    terms: list[Term] = []
    filters: dict[str, list[str]] = {}
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        if (matched := _FILTER.match(text, i)) is not None:
            key = matched.group(1).casefold()
            i = matched.end()
            if i < len(text) and text[i] == '"':
                value, i = _read_quoted(text, i)
            else:
                value, i = _read_word(text, i)
            filters.setdefault(key, []).append(_filter_value(key, value))
            continue
        if text[i] == '"':
            word, i = _read_quoted(text, i)
            prefix = i < len(text) and text[i] == "*"
            if prefix:
                i += 1
        else:
            word, i = _read_word(text, i)
            stripped = word.rstrip("*")
            prefix = stripped != word
            word = stripped
        if _searchable(word):
            terms.append(Term(word.strip(), prefix))
    if len(terms) > MAX_TERMS:
        raise InvalidRequest(f"query has {len(terms)} terms; use at most {MAX_TERMS}")
    if not terms and not filters:
        raise InvalidRequest(
            'nothing to search for: type a word, a "phrase", a prefix* or a filter'
            " (agent:, state:, branch:, cwd:)"
        )
    return ParsedQuery(tuple(terms), {k: tuple(v) for k, v in filters.items()})


def as_typed(text: str) -> str:
    """``text`` as a search box sends it while the person is still typing: its last
    word may still grow, so it searches as a prefix ("teammat" finds "teammates").

    A filter, a quoted phrase, a word already ending in ``*`` and a query ending in
    a space (the word is finished) are sent as typed.
    """
    if not text or text[-1].isspace() or text.count('"') % 2:
        return text
    last = text.split()[-1]
    if last.endswith(("*", '"')) or _FILTER.match(last) or not _searchable(last):
        return text
    return text + "*"
