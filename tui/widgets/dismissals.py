"""Dismissals with an undo window: nothing is deleted until the window closes.

A non-visual widget: it owns the sessions dismissed a moment ago, their timers
and the store commits; the screen takes the row out of the list and puts it
back on undo, and hears about every change through :class:`Dismissals.Changed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from core.errors import DelegateError
from core.models import Session
from tui.workers import ForwardsWorkerErrors

UNDO_SECONDS = 6.0

Committer = Callable[[str], Awaitable[object]]


@dataclass
class PendingDismissal:
    """A dismissed row still inside its undo window."""

    session: Session
    index: int
    timer: Timer


class Dismissals(ForwardsWorkerErrors, Widget):
    """Sessions inside their undo window, newest last."""

    DEFAULT_CSS = """
    Dismissals { display: none; }
    """

    class Changed(Message):
        """A dismissal started, was undone or committed. Handle with ``on_dismissals_changed``."""

    class CommitFailed(Message):
        """The store refused a dismissal: the row comes back. ``on_dismissals_commit_failed``."""

        def __init__(self, pending: PendingDismissal, error: DelegateError) -> None:
            super().__init__()
            self.pending = pending
            self.error = error

    def __init__(self, commit: Committer, *, undo_seconds: float = UNDO_SECONDS) -> None:
        super().__init__()
        self._commit = commit
        self.undo_seconds = undo_seconds
        self._pending: dict[str, PendingDismissal] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def is_pending(self, conversation_id: str) -> bool:
        return conversation_id in self._pending

    def start(self, session: Session, index: int) -> None:
        """``session`` (shown at ``index``) leaves the list; the store hears in a moment."""
        cid = session.conversation_id
        timer = self.set_timer(self.undo_seconds, lambda: self._commit_later(cid))
        self._pending[cid] = PendingDismissal(session, index, timer)
        self.post_message(self.Changed())

    def undo_last(self) -> PendingDismissal | None:
        """Take back the latest dismissal; None when there is nothing to undo."""
        if not self._pending:
            return None
        pending = self._pending.pop(next(reversed(self._pending)))
        pending.timer.stop()
        self.post_message(self.Changed())
        return pending

    @work(group="dismiss", name="dismissing the session", exit_on_error=False)
    async def _commit_later(self, conversation_id: str) -> None:
        await self.commit(conversation_id)

    async def commit(self, conversation_id: str) -> None:
        pending = self._pending.pop(conversation_id, None)
        if pending is None:
            return
        pending.timer.stop()
        try:
            await self._commit(conversation_id)
        except DelegateError as exc:
            self.post_message(self.CommitFailed(pending, exc))
        self.post_message(self.Changed())

    async def commit_all(self) -> None:
        """The app is closing: every dismissal still in its window is committed now."""
        for cid in list(self._pending):
            await self.commit(cid)
