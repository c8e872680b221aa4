"""A result's snippet: the few words around its best match, with the matches as spans.

The index hands back a matched row with every match marked (FTS5
``highlight()``, characters 2 and 3 around each matched word or phrase). A row
of an imported transcript is a *part* holding several texts
(:mod:`core.search.indexing`); the snippet comes from the one text with the
most matches, so its role and time are that text's.
"""

from __future__ import annotations

import json
import re

from core.models import SearchSnippet, TextSpan
from core.sources.texts import SEPARATOR

SNIPPET_WORDS = 16
"""Words in a snippet (about; a snippet never crosses from one text into another)."""
MARK_OPEN, MARK_CLOSE, ELLIPSIS = "\x02", "\x03", "…"
_CONTEXT = 3  # words kept before the first match, when the window allows
# A long text is cut to a piece around its densest matches before its words are
# read: the matches starting within _DENSE_CHARS of one another count together.
_PIECE_BEFORE, _PIECE_AFTER, _DENSE_CHARS = 400, 800, 160
_OPEN = re.compile("\x02")
_SPACES = re.compile(r"\s+")
_MARKS = re.compile("([\x02\x03])")
# What FTS5's unicode61 tokenizer takes for a word: letters, digits, private use.
_WORD = re.compile(r"[^\W_]+")
# A row's kind -> the snippet's role: a name the user gave is shown as the title.
_ROLES = {"title": "title", "name": "title", "user": "user", "assistant": "assistant"}


def best_snippet(
    highlighted: str, marks: str | None, kind: str, at_us: int
) -> tuple[SearchSnippet, int] | None:
    """The snippet of a matched row and its time; ``marks``: a part's per-text roles.

    ``kind`` and ``at_us`` describe a row holding one text (a title, a message).
    """
    if marks is None:
        texts = [highlighted]
        roles = [(kind, at_us)]
    else:
        texts = highlighted.split(SEPARATOR)
        roles = [(str(r), int(a)) for r, a in json.loads(marks)]
        if len(roles) != len(texts):  # not the part it says: show it whole
            texts, roles = [highlighted.replace(SEPARATOR, " ")], [(kind, at_us)]
    best = max(range(len(texts)), key=lambda i: (texts[i].count(MARK_OPEN), -i))
    snippet = cut(texts[best])
    if snippet is None:
        return None
    role, at = roles[best]
    return snippet.model_copy(update={"role": _ROLES.get(role, "user")}), at


def cut(marked: str, words: int = SNIPPET_WORDS) -> SearchSnippet | None:
    """About ``words`` words of ``marked`` around its densest matches, on one line."""
    marked, cut_before, cut_after = _around_matches(marked.strip())
    text, spans = _plain(_SPACES.sub(" ", marked))
    if cut_before:  # the piece starts and ends inside words: drop their ends
        text, spans = _drop_head(text, spans)
    if cut_after:
        text = text[: text.rfind(" ")] if " " in text else text
        spans = [(a, min(b, len(text))) for a, b in spans if a < len(text)]
    text, spans = _strip(text, spans)
    if not text:
        return None
    tokens = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    first, last = 0, len(tokens)
    if len(tokens) > words:
        first = _window(_matched(tokens, spans), words)
        last = first + words
    start = tokens[first][0] if first > 0 else 0
    end = tokens[last - 1][1] if last < len(tokens) else len(text)
    head = ELLIPSIS if start > 0 or cut_before else ""
    tail = ELLIPSIS if end < len(text) or cut_after else ""
    shift = len(head) - start
    kept = [
        TextSpan(start=max(a, start) + shift, end=min(b, end) + shift)
        for a, b in spans
        if a < end and start < b
    ]
    return SearchSnippet(text=head + text[start:end] + tail, highlights=kept, role="user")


def _around_matches(marked: str) -> tuple[str, bool, bool]:
    """The piece of a long text around its densest matches (the rest is never shown).

    Returns the piece and whether text was cut before and after it; the words
    are picked from this piece only, so a 64 KiB message costs what a line does.
    """
    if len(marked) <= _PIECE_BEFORE + _PIECE_AFTER:
        return marked, False, False
    opens = [m.start() for m in _OPEN.finditer(marked)]
    anchor = 0
    if opens:
        best = -1
        j = 0
        for i, at in enumerate(opens):
            while j < len(opens) and opens[j] < at + _DENSE_CHARS:
                j += 1
            if j - i > best:
                best, anchor = j - i, at
    start = max(0, anchor - _PIECE_BEFORE)
    end = min(len(marked), anchor + _PIECE_AFTER)
    return marked[start:end], start > 0, end < len(marked)


def _drop_head(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Text from its first space on (a cut word is not shown), spans moved with it."""
    space = text.find(" ")
    if space < 0:
        return text, spans
    return text[space:], [(a - space, b - space) for a, b in spans if b > space]


def _strip(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Text without its leading and trailing spaces, spans moved with it."""
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    return text, [(max(0, a - lead), min(len(text), b - lead)) for a, b in spans if b - lead > 0]


def _window(hit: list[bool], words: int) -> int:
    """The first word of the window holding the most matches, a little context first."""
    best_count, best_first = -1, 0
    count = sum(hit[:words])
    for first in range(len(hit) - words + 1):
        if first > 0:
            count += hit[first + words - 1] - hit[first - 1]
        if count > best_count:
            best_count, best_first = count, first
    if best_count <= 0:
        return 0
    # A few words lead up to the first match, if no match drops off the end for them.
    lead = hit.index(True, best_first)
    first = max(0, min(lead - _CONTEXT, len(hit) - words))
    if first < best_first and any(hit[first + words : best_first + words]):
        return best_first
    return first


def _matched(tokens: list[tuple[int, int]], spans: list[tuple[int, int]]) -> list[bool]:
    """Whether each word (in order) is inside a span (in order)."""
    hit: list[bool] = []
    i = 0
    for start, end in tokens:
        while i < len(spans) and spans[i][1] <= start:
            i += 1
        hit.append(i < len(spans) and spans[i][0] < end)
    return hit


def _plain(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """Marked text -> the text and the spans that were marked."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length, start = 0, None
    for piece in _MARKS.split(marked):
        if piece == MARK_OPEN:
            start = length
        elif piece == MARK_CLOSE:
            if start is not None and length > start:
                spans.append((start, length))
            start = None
        else:
            plain.append(piece)
            length += len(piece)
    return "".join(plain), spans
