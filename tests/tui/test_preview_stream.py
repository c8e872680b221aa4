"""A streamed reply is sanitised chunk by chunk and appended, as if sanitised whole; the
word still arriving waits for its end (it is judged whole for secrets)."""

from __future__ import annotations

from tui.shared.safe_text import visible
from tui.widgets.preview import LiveReply

HEADER = "assistant (streaming)\n"


def streamed(chunks: list[str]) -> str:
    live = LiveReply()
    for chunk in chunks:
        live.append(chunk)
    return live.text.plain


def test_chunks_read_as_the_whole_reply_sanitised_once() -> None:
    reply = "line one\r\nline two \x1b[2J cleared?\r\n[bold]markup[/] \x07 end\r\n"
    whole = HEADER + visible(reply)
    for size in (1, 2, 3, 7, len(reply)):
        chunks = [reply[i : i + size] for i in range(0, len(reply), size)]
        assert streamed(chunks) == whole, size


def test_a_crlf_split_across_chunks_is_one_newline() -> None:
    assert streamed(["a\r", "\nb "]) == HEADER + "a\nb "
    assert streamed(["a\r", "b "]) == HEADER + "a\\x0db "


def test_a_word_still_arriving_waits_for_its_end() -> None:
    assert streamed(["the build is gre"]) == HEADER + "the build is "
    assert streamed(["the build is gre", "en\n"]) == HEADER + "the build is green\n"


def test_appending_keeps_what_was_shown() -> None:
    live = LiveReply()
    live.append("first line\n")
    live.append("second ")
    assert live.text.plain == HEADER + "first line\nsecond "
    live.append("line\nthird")
    assert live.text.plain == HEADER + "first line\nsecond line\n"
    assert live.text.style == "bold green"  # the header keeps its style
