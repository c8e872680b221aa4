"""What both importers produce: the facts of one session, plus small helpers."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Self

TITLE_CHARS = 80
INT64_MAX = 2**63 - 1
"""SQLite's largest integer: every count stored is clamped into ``0..INT64_MAX``."""
MIN_US = 946_684_800_000_000  # 2000-01-01T00:00:00Z
MAX_US = 4_102_444_800_000_000  # 2100-01-01T00:00:00Z
"""Timestamps outside ``[MIN_US, MAX_US)`` are ignored: no agent wrote them, and a
year like 9999 (or 1) breaks every reader that turns it into a local date."""
MAX_PREVIEW_CHARS = 32 * 1024
"""A previewed message's text is cut here (tool outputs can be megabytes)."""


@dataclass
class RunningTotals:
    """Base of an importer's per-file state: kept as JSON between scans.

    Subclasses are dataclasses of running totals; a scan that resumes from a
    byte offset starts from the totals the last scan saved.
    """

    first_ts: str | None = None
    last_ts: str | None = None
    odd_timestamps: int = 0  # present but unreadable or out of range: ignored

    def to_json(self) -> dict[str, Any]:
        # Not ``asdict``: its deep copy was a tenth of parsing a small file. The
        # fields are scalars and lists of ``[a, b]`` pairs, copied here.
        return {f.name: _copied(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def saw_timestamp(self, ts: object) -> None:
        if ts is None:
            return
        if not isinstance(ts, str) or not is_valid_time(ts):
            self.odd_timestamps += 1
            return
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts


def _copied(value: Any) -> Any:
    if isinstance(value, list):
        return [list(item) if isinstance(item, list) else item for item in value]
    return value


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What an importer learned about one conversation from its transcript."""

    conversation_id: str
    source: str  # "claude-code" | "codex"
    agent_id: str
    cwd: str
    git_branch: str | None
    title: str
    strong_title: bool  # from a summary / custom title / sub-agent description
    parent_id: str | None
    created_us: int
    last_us: int
    turns: int
    messages: int
    tokens: int
    context_tokens: int
    context_limit: int
    compactions: int
    warmup: bool = False  # a Claude Code warm-up sub-agent (its only prompt is "Warmup")
    context_known: bool = True  # the agent recorded its usage at least once
    context_estimated: bool = False  # compacted since: ``context_tokens`` is an estimate
    model: str | None = None  # the model the agent named last
    # ``(turn, tokens in use)`` of the last turns, oldest first: the trend.
    samples: tuple[tuple[int, int], ...] = ()


SAMPLE_TURNS = 20
"""Per-turn context figures an importer keeps in its parse state (the trend's length)."""


def kept_prompt(system_tokens: int, before: int) -> int:
    """What a compaction keeps of the system prompt measured at the first call: all of
    it, unless that first call already held half of what the context held before the
    compaction (a transcript that starts mid-conversation: the figure is no prompt)."""
    return system_tokens if 2 * system_tokens <= before else 0


def keep_sample(samples: list[list[int]], turn: int, used: int) -> None:
    """Remember the context at ``turn`` (the latest figure of a turn wins), the last
    ``SAMPLE_TURNS`` turns only. ``samples`` is JSON-friendly: ``[[turn, used], ...]``."""
    if samples and samples[-1][0] == turn:
        samples[-1][1] = used
        return
    samples.append([turn, used])
    if len(samples) > SAMPLE_TURNS:
        del samples[0]


CHARS_PER_TOKEN = 4
"""Right after a compaction the context holds about the summary: its characters over this."""


def estimate_tokens(chars: int) -> int:
    """A rough token count for ``chars`` characters of text (about 4 per token in English)."""
    return clamp_int(-(-chars // CHARS_PER_TOKEN))


def iso_to_us(value: object) -> int | None:
    """``2025-07-14T22:59:30.699Z`` -> microseconds since the epoch.

    None when unreadable, without a time zone, or outside ``[MIN_US, MAX_US)``.
    """
    if not isinstance(value, str) or not value:
        return None
    return _str_to_us(value)


_SECONDS_Z = re.compile(r":[0-5][0-9](?:\.[0-9]{1,6})?Z")
_valid_minute: str | None = None


def is_valid_time(value: str) -> bool:
    """``iso_to_us(value) is not None``, without parsing most of a transcript's times.

    Every line carries a time, nearly all within a minute of the line before: a
    time in the minute last found valid, with whole seconds and the ``Z`` zone,
    is valid too (the minute fixes the date and the range; a second 00-59 with
    up to six decimals always parses). Anything else is parsed.
    """
    global _valid_minute
    minute = value[:16]
    if minute == _valid_minute and _SECONDS_Z.fullmatch(value, 16):
        return True
    if _str_to_us(value) is None:
        return False
    if _SECONDS_Z.fullmatch(value, 16):
        _valid_minute = minute
    return True


# A line's time is read by the session facts and again by the search text of the
# same line: the second read is a cache hit.
@functools.lru_cache(maxsize=8)
def _str_to_us(value: str) -> int | None:
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            return None
        us = int(moment.timestamp() * 1_000_000)
    except (ValueError, OverflowError):  # a bad offset, year 1 at +14:00, ...
        return None
    return us if MIN_US <= us < MAX_US else None


def clamp_us(us: int) -> int:
    """A time from elsewhere (a file's mtime) pulled into ``[MIN_US, MAX_US)``."""
    return min(max(us, MIN_US), MAX_US - 1)


def clamp_int(n: int) -> int:
    """A count pulled into ``0..INT64_MAX`` (what SQLite can store)."""
    if 0 <= n <= INT64_MAX:  # nearly always: no call to min and max (a hot path)
        return n
    return 0 if n < 0 else INT64_MAX


def clip(text: str, limit: int = MAX_PREVIEW_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def as_int(value: Any) -> int:
    """A count from a transcript: ints only (not bools or floats), clamped to ``0..INT64_MAX``."""
    if type(value) is not int:
        return 0
    return value if 0 <= value <= INT64_MAX else clamp_int(value)
