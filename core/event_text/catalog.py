"""Every history event kind and the describer that words it: :func:`describe`."""

from __future__ import annotations

from core.event_text import capsules, context, returns, runs
from core.event_text.model import Describer, EventText
from core.events import HistoryEvent

_DESCRIBERS: dict[str, Describer] = {
    **runs.DESCRIBERS,
    **context.DESCRIBERS,
    **capsules.DESCRIBERS,
    **returns.DESCRIBERS,
}

DESCRIBED_KINDS = frozenset(_DESCRIBERS)
"""Every event kind that has a description."""


def describe(event: HistoryEvent, *, continued_in: str | None = None) -> EventText:
    """What ``event`` says, for every front end. ``continued_in``: the session that has
    since continued the hand-off the event says waits for a person (None: none has)."""
    return _DESCRIBERS[event.kind](event, continued_in)
