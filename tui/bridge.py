"""The one place core events become Textual messages.

Core publishes plain pydantic events on its bus; widgets only ever see these
Textual messages, so neither side knows the other's framework. Events the panel
has no use for are dropped here.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message
from textual.message_pump import MessagePump

from core.events import (
    BusEvent,
    EventBus,
    HistoryEvent,
    RunActivity,
    RunOutput,
    RunsChanged,
    SessionsChanged,
    WatchStatus,
)


class HistoryPosted(Message):
    """A history event happened (here or, seen by the supervisor, in another process).
    Handle with ``on_history_posted``."""

    def __init__(self, event: HistoryEvent) -> None:
        super().__init__()
        self.event = event


class RunOutputReceived(Message):
    """A chunk of a streamed reply. Handle with ``on_run_output_received``."""

    def __init__(self, event: RunOutput) -> None:
        super().__init__()
        self.event = event


class SessionsUpdated(Message):
    """Sessions changed or were added (``changed``) or removed, by any process.
    Handle with ``on_sessions_updated``."""

    def __init__(self, changed: tuple[str, ...], removed: tuple[str, ...]) -> None:
        super().__init__()
        self.changed = changed
        self.removed = removed


class RunsUpdated(Message):
    """Runs whose status or activity changed, in any process. Handle with
    ``on_runs_updated``."""

    def __init__(self, run_ids: tuple[str, ...]) -> None:
        super().__init__()
        self.run_ids = run_ids


class WatchStatusChanged(Message):
    """How transcripts are watched now. Handle with ``on_watch_status_changed``."""

    def __init__(self, status: WatchStatus) -> None:
        super().__init__()
        self.status = status


class RunActivityReceived(Message):
    """A run this process drives wrote to stderr. Handle with ``on_run_activity_received``."""

    def __init__(self, event: RunActivity) -> None:
        super().__init__()
        self.event = event


def to_message(event: BusEvent) -> Message | None:
    """The message for ``event``; None for an event the panel does not show."""
    if isinstance(event, RunOutput):
        return RunOutputReceived(event)
    if isinstance(event, SessionsChanged):
        return SessionsUpdated(event.conversation_ids, event.removed)
    if isinstance(event, RunsChanged):
        return RunsUpdated(event.run_ids)
    if isinstance(event, WatchStatus):
        return WatchStatusChanged(event)
    if isinstance(event, RunActivity):
        return RunActivityReceived(event)
    # What is left is a history event (mypy checks it: a new kind of bus event
    # must be placed above, or dropped explicitly).
    return HistoryPosted(event)


def connect(bus: EventBus, target: MessagePump) -> Callable[[], None]:
    """Forward every bus event the panel shows to ``target``; returns the disconnect."""

    def forward(event: BusEvent) -> None:
        message = to_message(event)
        if message is not None:
            target.post_message(message)

    return bus.add_listener(forward)
