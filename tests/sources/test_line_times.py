"""A line's time is checked without parsing most of them, and judged as a full parse would.

``is_valid_time`` remembers the last minute it found valid; these tests feed it
sequences (the memory is what could go wrong) and compare every answer with
``iso_to_us``, the full parse.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sources.common import is_valid_time, iso_to_us
from core.sources.worker import FileTask, parse_file

MINUTES = ("2025-07-14T22:59", "2099-12-31T23:59", "2100-01-01T00:00", "1999-12-31T23:59")
TAILS = (
    ":30.699Z", ":00Z", ":59.999999Z", ":60Z", ":3Z", ":30.1234567Z", ":30.Z", ":30.699",
    ":30.699+02:00", ":30.699-14:00", ":30.699z", ":30.699Zx", ":30.699Z\n", "", ":٣0Z",
)  # fmt: skip

times = st.one_of(
    st.builds(lambda m, t: m + t, st.sampled_from(MINUTES), st.sampled_from(TAILS)),
    st.builds(
        lambda d, h, m, s: f"2025-{d}T{h}:{m}:{s}Z",
        st.sampled_from(("07-14", "02-29", "02-28", "13-01", "00-10")),
        st.sampled_from(("00", "23", "24")),
        st.sampled_from(("00", "59", "60")),
        st.sampled_from(("00", "59", "61", "5")),
    ),
    st.text(max_size=30),
)


@settings(max_examples=400)
@given(st.lists(times, min_size=1, max_size=12))
def test_a_time_is_valid_exactly_when_it_parses_whatever_came_before(values: list[str]) -> None:
    for value in values:
        assert is_valid_time(value) == (iso_to_us(value) is not None), value


def test_odd_times_between_good_ones_of_the_same_minute_are_each_counted(tmp_path: Path) -> None:
    session = "aaaaaaaa-0000-4000-8000-000000000077"

    def line(ts: str, text: str) -> str:
        return (
            f'{{"type":"user","sessionId":"{session}","cwd":"/w","timestamp":"{ts}",'
            f'"message":{{"role":"user","content":"{text}"}}}}\n'
        )

    path = tmp_path / f"{session}.jsonl"
    path.write_text(
        line("2026-03-01T10:00:01.5Z", "first")
        + line("2026-03-01T10:00:60Z", "a second too far")  # same minute, no such second
        + line("2026-03-01T10:00:02", "no zone")
        + line("2026-03-01T10:00:03Z", "good")
        + line("2026-03-01T10:00:04.1234567Z", "seven decimals: parsed, fine")
    )
    stat = path.stat()
    result = parse_file(FileTask(str(path), "claude-code", stat.st_size, stat.st_mtime_ns, session))

    assert result.new_odd_timestamps == 2
    assert result.facts is not None
    assert result.facts.messages == 5
    assert result.facts.last_us == iso_to_us("2026-03-01T10:00:04.1234567Z")
