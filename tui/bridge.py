"""The one place core events become Textual messages.

Core publishes plain pydantic events on its bus; widgets only ever see these
Textual messages, so neither side knows the other's framework.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message
from textual.message_pump import MessagePump

from core.events import (
    BusEvent,
    EventBus,
    HistoryEvent,
    RunOutput,
    RunsChanged,
    SessionsChanged,
    SupervisorEvent,
    WatchStatus,
)


class HistoryPosted(Message):
    """A history event happened. Handle with ``on_history_posted``."""

    def __init__(self, event: HistoryEvent) -> None:
        super().__init__()
        self.event = event


class RunOutputReceived(Message):
    """A chunk of a streamed reply. Handle with ``on_run_output_received``."""

    def __init__(self, event: RunOutput) -> None:
        super().__init__()
        self.event = event


class SupervisorNotice(Message):
    """The live supervisor saw a change (sessions, runs, watch status).

    Handle with ``on_supervisor_notice``.
    """

    def __init__(self, event: SupervisorEvent) -> None:
        super().__init__()
        self.event = event


def to_message(event: BusEvent) -> Message:
    if isinstance(event, RunOutput):
        return RunOutputReceived(event)
    if isinstance(event, SessionsChanged | RunsChanged | WatchStatus):
        return SupervisorNotice(event)
    return HistoryPosted(event)


def connect(bus: EventBus, target: MessagePump) -> Callable[[], None]:
    """Forward every bus event to ``target``; returns the disconnect function."""

    def forward(event: BusEvent) -> None:
        target.post_message(to_message(event))

    return bus.add_listener(forward)
