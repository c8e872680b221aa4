"""Redact a reply while it streams: what is held back until it can no longer be part of a secret.

:func:`core.redact.redact` judges a whole text. A streamed reply arrives in chunks
that cut anywhere — between ``Bearer`` and its token, inside a key, across the
lines of a private key block — so redacting chunk by chunk shows the halves of a
secret neither half of which looks like one. A :class:`StreamRedactor` shows
complete lines only (every rule but a key block matches within one line), holds
a key block back until its end line, and lets a line with no end in sight go out
in pieces cut at a space well before the tail, so nothing is held without bound.
A view drawn again on each chunk (the panel) also shows :meth:`~StreamRedactor.pending`,
the held line up to its last whole word, judged with the rest of its line.
"""

from __future__ import annotations

import re

from core.redact import redact

HOLD_LINE_CHARS = 8192
"""A line held this long without its end goes out in part: a terminal must move."""
KEEP_TAIL_CHARS = 1024
"""What is kept back of such a line: longer than any single secret the rules know."""
HOLD_BLOCK_CHARS = 64 * 1024
"""A key block held this long without its end line is shown redacted (to its end)."""

_BLOCK_OPENS = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY"
    r"|Private-Lines:"
)
_BLOCK_CLOSES = re.compile(
    r"-----END[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----"
    r"|---- END SSH2 ENCRYPTED PRIVATE KEY ----|Private-MAC: *[0-9a-fA-F]+(?=[^0-9a-fA-F])"
)


class StreamRedactor:
    """Chunks in, redacted text out, in order; :meth:`close` gives what is left."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        """What of the text so far can be shown now (redacted); the rest is held."""
        self._held += chunk
        ready = self._ready()
        if not ready:
            return ""
        shown, self._held = self._held[:ready], self._held[ready:]
        return redact(shown)

    def pending(self) -> str:
        """What is held, as far as it can be shown for now (redacted): up to its last
        space, so a word still arriving is never shown in halves; nothing of an open
        key block. For a view that is drawn again (the panel), not a terminal."""
        held = self._held
        opened, _ = _blocks(held)
        if opened is not None:
            held = held[:opened]
        words = max(held.rfind(" "), held.rfind("\t")) + 1
        return redact(held[:words]) if words else ""

    def close(self) -> str:
        """Everything still held, redacted (the stream ended)."""
        shown, self._held = self._held, ""
        return redact(shown) if shown else ""

    def _ready(self) -> int:
        """How many characters of the held text can be judged now."""
        held = self._held
        opened, closed = _blocks(held)
        if opened is not None:
            if len(held) - opened >= HOLD_BLOCK_CHARS:
                return len(held)  # no end line coming: the rule masks to the end
            return max(held.rfind("\n", 0, opened) + 1, closed)  # what is before it
        # A block is judged with its end line whole (a PuTTY MAC ends mid-line).
        end = max(held.rfind("\n") + 1, closed)
        if end:
            return end
        if len(held) < HOLD_LINE_CHARS:
            return 0
        cut = held.rfind(" ", 0, len(held) - KEEP_TAIL_CHARS)
        return cut + 1 if cut > 0 else len(held) - KEEP_TAIL_CHARS


def _blocks(text: str) -> tuple[int | None, int]:
    """Where a key block starts in ``text`` that has not ended yet (None: none), and
    where the last one that did end ends (0: none)."""
    position, closed = 0, 0
    while True:
        start = _BLOCK_OPENS.search(text, position)
        if start is None:
            return None, closed
        close = _BLOCK_CLOSES.search(text, start.end())
        if close is None:
            return start.start(), closed
        position = closed = close.end()


class TerminalStream:
    """A streamed reply for a terminal, which cannot take back what it printed: word by
    word (what :meth:`StreamRedactor.pending` shows), then what the whole line adds.

    What was printed of a line still arriving is ``ahead``; each chunk prints only what
    extends it. Should the rest of a line change how its start is judged, nothing more
    of it is printed until the line is whole, and then only what follows the part the
    two agree on (the redacted line's tail), never the unredacted text.
    """

    def __init__(self) -> None:
        self._redactor = StreamRedactor()
        self._ahead = ""

    def feed(self, chunk: str) -> str:
        """What to print now for ``chunk``."""
        out = self._settle(self._redactor.feed(chunk))
        pending = self._redactor.pending()
        if pending.startswith(self._ahead):
            out += pending[len(self._ahead) :]
            self._ahead = pending
        return out

    def close(self) -> str:
        """What is left to print once the reply ended."""
        return self._settle(self._redactor.close())

    def _settle(self, done: str) -> str:
        """Print ``done`` (judged whole) but for what of it is printed already."""
        ahead = self._ahead
        if done.startswith(ahead):
            self._ahead = ""
            return done[len(ahead) :]
        if ahead.startswith(done):
            self._ahead = ahead[len(done) :]
            return ""
        agreed = next((i for i, (a, b) in enumerate(zip(done, ahead, strict=False)) if a != b), 0)
        self._ahead = ""
        return done[agreed:]
