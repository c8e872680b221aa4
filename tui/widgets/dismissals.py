"""Archiving from the panel, and undoing it: undo restores.

A non-visual widget: it archives a session in the store at once (nothing is
deleted; the archive keeps it), remembers the sessions archived from this panel,
newest last, and undo restores the latest one. The screen takes the row out of
the list and puts it back on undo, and hears about every change through
:class:`Dismissals.Changed`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from core.errors import DelegateError
from core.models import Session
from tui.shared.workers import ForwardsWorkerErrors

UNDO_SECONDS = 6.0  # how long the "archived — ctrl+z to undo" notice stays
UNDO_KEPT = 50  # archives from this panel that undo can still take back, at most

StoreCall = Callable[[str], Awaitable[object]]


@dataclass
class PendingDismissal:
    """A session archived from this panel, and where its row was."""

    session: Session
    index: int


class Dismissals(ForwardsWorkerErrors, Widget):
    """Archive and restore through the store; the sessions undo can bring back."""

    DEFAULT_CSS = """
    Dismissals { display: none; }
    """

    class Changed(Message):
        """An archive or a restore happened. Handle with ``on_dismissals_changed``."""

    class CommitFailed(Message):
        """The store refused to archive: the row comes back. ``on_dismissals_commit_failed``."""

        def __init__(self, pending: PendingDismissal, error: DelegateError) -> None:
            super().__init__()
            self.pending = pending
            self.error = error

    class RestoreFailed(Message):
        """The store refused to restore. ``on_dismissals_restore_failed``."""

        def __init__(self, pending: PendingDismissal, error: DelegateError) -> None:
            super().__init__()
            self.pending = pending
            self.error = error

    def __init__(
        self, archive: StoreCall, restore: StoreCall, *, undo_seconds: float = UNDO_SECONDS
    ) -> None:
        super().__init__()
        self._archive = archive
        self._restore = restore
        self.undo_seconds = undo_seconds
        self._undoable: list[PendingDismissal] = []
        self._in_flight: dict[str, Worker[None]] = {}

    def __len__(self) -> int:
        """Archives still being written to the store."""
        return len(self._in_flight)

    def is_pending(self, conversation_id: str) -> bool:
        """Whether the store has yet to hear that this session was archived."""
        return conversation_id in self._in_flight

    def start(self, session: Session, index: int) -> None:
        """Archive ``session`` (shown at ``index``); undo can bring it back."""
        pending = PendingDismissal(session, index)
        self._undoable = [*self._undoable[-(UNDO_KEPT - 1) :], pending]
        self._in_flight[session.conversation_id] = self._archive_now(pending)

    def undo_last(self) -> PendingDismissal | None:
        """Restore the latest archive of this panel; None when there is nothing to undo."""
        if not self._undoable:
            return None
        pending = self._undoable.pop()
        self._restore_now(pending)
        return pending

    @work(group="archive", name="archiving the session", exit_on_error=False)
    async def _archive_now(self, pending: PendingDismissal) -> None:
        cid = pending.session.conversation_id
        try:
            await self._archive(cid)
        except DelegateError as exc:
            if pending in self._undoable:
                self._undoable.remove(pending)
            self.post_message(self.CommitFailed(pending, exc))
        finally:
            self._in_flight.pop(cid, None)
        self.post_message(self.Changed())

    @work(group="archive", name="restoring the session", exit_on_error=False)
    async def _restore_now(self, pending: PendingDismissal) -> None:
        cid = pending.session.conversation_id
        in_flight = self._in_flight.get(cid)
        if in_flight is not None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await in_flight.wait()  # restore after the archive, never before it
        try:
            await self._restore(cid)
        except DelegateError as exc:
            self.post_message(self.RestoreFailed(pending, exc))
        self.post_message(self.Changed())

    async def commit_all(self) -> None:
        """The app is closing: wait for the archives still being written."""
        for worker in list(self._in_flight.values()):
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
