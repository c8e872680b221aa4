"""What a description of one history event holds: the words every front end renders.

A description is plain data: the history cell draws ``title`` and ``detail``,
``delegate watch`` prints ``line``, ``delegate history`` shows ``record``. Styles are
words a renderer may use (a terminal colour, a context level), never objects of a
rendering library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel

from core.models import ContextLevel


class Tone(StrEnum):
    """How an event reads at a glance (the colour of a cell's edge)."""

    PLAIN = ""
    FAILED = "failed"  # something went wrong
    DISMISSED = "dismissed"  # out of the way: archived, purged
    STARTED = "started"  # work under way
    CANCELLED = "cancelled"  # stopped by a person
    ATTENTION = "context"  # waits on a person: context warnings, stale capsules


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a detail line: its text and how it stands out (``style``: colour words,
    ``level``: coloured as that context level is everywhere)."""

    text: str
    style: str = ""
    level: ContextLevel | None = None


@dataclass(frozen=True, slots=True)
class EventText:
    """One history event, described once for every front end.

    ``variant``: which record the event reads as (a follow-up that failed reads as a
    failed run); ``title`` and ``detail``: the panel's cell, safe to show; ``line``: the
    ``delegate watch`` line (after its time), safe to show; ``record``: the detail column
    of ``delegate history``, raw data the caller masks and escapes. ``opens``: the
    session a person jumps to from it (None: the event's own); ``waiting``: the hand-off
    document it says waits for a person; ``wraps``: its detail is the news and wraps
    rather than being cut.
    """

    variant: str
    title: str
    detail: tuple[Span, ...]
    line: str
    record: str
    tone: Tone = Tone.PLAIN
    opens: str | None = None
    waiting: str | None = None
    wraps: bool = False

    @property
    def summary(self) -> str:
        """The cell's detail line as plain text."""
        return "".join(span.text for span in self.detail)


Describer = Callable[[Any, "str | None"], EventText]
"""Describes one kind of event; the second argument names the session that has since
continued the hand-off the event says waits (None: none has)."""

E = TypeVar("E", bound=BaseModel)


def described(
    event_type: type[E], describe: Callable[[E, str | None], EventText]
) -> tuple[str, Describer]:
    """``(kind, describer)`` for one event class, keyed by the kind it carries."""
    kind = event_type.model_fields["kind"].default
    assert isinstance(kind, str), event_type
    return kind, describe


def plain(text: str) -> tuple[Span, ...]:
    """A detail line with nothing standing out."""
    return (Span(text),)
