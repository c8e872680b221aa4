"""The detail column of ``delegate history``: the ``record`` of each event's description.

Every kind is described once, in ``core.event_text``; the text is raw event data: the
caller masks secrets and escapes controls.
"""

from __future__ import annotations

from core.event_text.catalog import describe
from core.events import HistoryEvent


def detail(event: HistoryEvent) -> str:
    """One line (the first of it is shown) saying what ``event`` was about."""
    return describe(event).record
