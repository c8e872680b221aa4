"""One description per history event kind, rendered by every front end.

:func:`describe` turns an event into an :class:`EventText`: the panel's history cell
draws its ``title`` and ``detail``, ``delegate watch`` prints its ``line``, ``delegate
history`` shows its ``record``. A new event kind is described once, in the module of
its area, and appears everywhere:

=====================  ========================================================
module                 kinds it describes
=====================  ========================================================
``runs``               launches, run ends, follow-ups, interrupts; a session
                       archived, restored, renamed or purged
``context``            context thresholds, clamps, hand-offs, continuations,
                       checkpoints
``capsules``           capsules saved, injected, gaps, stale files
``returns``            compact returns accepted or rejected, chains ended
=====================  ========================================================

``words``, ``outcomes`` and ``return_words`` hold the wording those share with the
rest of the front ends (safe text, ids, counts, a hand-off's outcome, role names).
"""

from __future__ import annotations

from core.event_text import capsules, context, returns, runs
from core.event_text.model import Describer, EventText, Span, Tone
from core.events import HistoryEvent

__all__ = ["DESCRIBED_KINDS", "EventText", "Span", "Tone", "describe"]

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
