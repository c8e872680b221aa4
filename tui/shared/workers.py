"""Worker failures travel to one place: the app decides how a person sees them.

Every worker in the TUI is declared ``exit_on_error=False``: one bad row or one
failed query must never take the panel down. Textual posts ``Worker.StateChanged``
only to the node that owns the worker (it does not bubble), so each node that
runs workers mixes in :class:`ForwardsWorkerErrors`, which turns an ``ERROR``
state into a bubbling :class:`WorkFailed`; ``DelegateApp`` handles that message.
"""

from __future__ import annotations

from textual.message import Message
from textual.worker import Worker, WorkerState


class WorkFailed(Message):
    """A worker raised. Handled once, by the app (``on_work_failed``)."""

    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__()
        self.what = what  # the worker's name: a phrase such as "loading the history"
        self.error = error


class ForwardsWorkerErrors:
    """Mixin for a widget or screen that runs workers: their errors bubble up."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        error = event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            self.post_message(WorkFailed(event.worker.name, error))  # type: ignore[attr-defined]
