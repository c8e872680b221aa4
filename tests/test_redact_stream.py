"""A reply redacted as it streams: no secret shows in pieces, whatever the chunking."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from secrets_corpus import planted, survivors

from core.redact import redact
from core.redact_stream import (
    HOLD_BLOCK_CHARS,
    HOLD_LINE_CHARS,
    StreamRedactor,
    TerminalStream,
)

PLANTED = list(planted())


def streamed(text: str, cuts: list[int]) -> tuple[str, list[str]]:
    """``text`` fed in the pieces ``cuts`` make: all that was shown, and each showing."""
    redactor = StreamRedactor()
    shown = []
    last = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        shown.append(redactor.feed(text[last:cut]))
        last = cut
    shown.append(redactor.close())
    return "".join(shown), shown


def test_no_planted_secret_shows_whatever_the_chunks() -> None:
    rng = random.Random(27)
    misses = []
    for plant, context, text in PLANTED:
        reply = f"Here is what I found:\n{text}\nDone, nothing else to report.\n"
        for size in (1, 3, 7, 16):  # a token at a time, as agents stream
            cuts = list(range(size, len(reply), size))
            whole, _ = streamed(reply, cuts)
            misses += [(plant.kind, context, size) for _ in survivors(plant, whole)]
        random_cuts = sorted(rng.sample(range(1, len(reply)), min(6, len(reply) - 1)))
        whole, _ = streamed(reply, random_cuts)
        misses += [(plant.kind, context, "random") for _ in survivors(plant, whole)]
    assert misses == []


def test_redacting_per_chunk_shows_the_halves_of_a_secret() -> None:
    # The reason the stream is held back: neither half alone looks like a secret.
    for first, second, secret in (
        ("connect to postgres://app:pa", "ss123word@db/orders\n", "ss123word"),
        ("the password is hun", "ter2horse, keep it safe\n", "ter2horse"),
        ("curl -u admin:", "s3cretPassw0rd https://example.test\n", "s3cretPassw0rd"),
    ):
        assert secret in redact(first) + redact(second)
        whole, _ = streamed(first + second, [len(first)])
        assert secret not in whole
        assert whole == redact(first + second)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_what_streams_is_the_whole_reply_redacted(text: str, cuts: list[int]) -> None:
    whole, _ = streamed(text, [c for c in cuts if c < len(text)])
    assert whole == redact(text)


def test_complete_lines_show_at_once_and_a_partial_one_waits() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("first line\nsecond") == "first line\n"
    assert redactor.feed(" half") == ""
    assert redactor.feed("\n") == "second half\n"
    assert redactor.close() == ""


def test_a_key_block_is_held_to_its_end_line() -> None:
    body = "\n".join("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC" for _ in range(5))
    block = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n"
    redactor = StreamRedactor()
    assert redactor.feed("before\n" + block[:60]) == "before\n"
    assert redactor.feed(block[60:-30]) == ""
    rest = redactor.feed(block[-30:] + "after\n")
    assert "MIIEvQ" not in rest
    assert rest.endswith("after\n")


def test_nothing_is_held_without_bound() -> None:
    redactor = StreamRedactor()
    word = "lorem ipsum dolor sit amet "
    shown = redactor.feed(word * (HOLD_LINE_CHARS // len(word) + 1))
    assert shown  # a very long line goes out in part
    assert shown.endswith(" ")  # cut at a space
    opened = StreamRedactor()
    assert opened.feed("-----BEGIN PRIVATE KEY-----\n") == ""
    flood = opened.feed("A" * HOLD_BLOCK_CHARS)
    assert flood
    assert "AAAA" not in flood  # masked to its end, never shown


def test_the_line_still_arriving_shows_to_its_last_whole_word() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("the build is gre") == ""
    assert redactor.pending() == "the build is "
    assert redactor.feed("en, the password is hun") == ""
    shown = redactor.pending()
    assert shown.startswith("the build is green, the password ")
    assert "hun" not in shown  # a word still arriving is never shown in halves
    redactor.feed("ter2horse and more")
    assert "ter2horse" not in redactor.pending()  # judged with the rest of its line
    assert "[REDACTED]" in redactor.pending()


def test_nothing_of_an_open_key_block_is_pending() -> None:
    redactor = StreamRedactor()
    redactor.feed("key: -----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0 more")
    assert redactor.pending() == "key: "


def test_no_planted_secret_shows_in_the_panels_view_of_a_stream() -> None:
    misses = []
    for plant, context, text in PLANTED:
        reply = f"Here is what I found:\n{text}\nDone.\n"
        redactor = StreamRedactor()
        shown = ""
        for at in range(0, len(reply), 3):
            shown += redactor.feed(reply[at : at + 3])
            view = shown + redactor.pending()  # what the panel draws after this chunk
            misses += [(plant.kind, context) for _ in survivors(plant, view)]
    assert misses == []


def printed(text: str, cuts: list[int]) -> list[str]:
    """What a terminal prints for ``text`` fed in the pieces ``cuts`` make, per chunk."""
    stream = TerminalStream()
    shown = []
    last = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        shown.append(stream.feed(text[last:cut]))
        last = cut
    shown.append(stream.close())
    return shown


def test_a_terminal_prints_word_by_word_before_the_line_ends() -> None:
    shown = printed("first half of the answer, then the rest", [4, 11, 15])
    assert shown[0] == ""  # "firs": a word still arriving waits
    assert shown[1] == "first half "  # whole words are printed at once
    assert "".join(shown) == "first half of the answer, then the rest"


def test_no_planted_secret_reaches_a_terminal_whatever_the_chunks() -> None:
    misses = []
    for plant, context, text in PLANTED:
        reply = f"Here is what I found:\n{text}\nDone, nothing else to report.\n"
        for size in (1, 3, 7, 16):
            whole = "".join(printed(reply, list(range(size, len(reply), size))))
            misses += [(plant.kind, context, size) for _ in survivors(plant, whole)]
    assert misses == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_what_a_terminal_prints_holds_no_secret(text: str, cuts: list[int]) -> None:
    whole = "".join(printed(text, [c for c in cuts if c < len(text)]))
    assert redact(whole) == whole
