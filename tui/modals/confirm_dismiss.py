"""Ask before archiving or purging: the modal names the session it would act on.

Archiving keeps everything (ctrl+z or the archive view brings it back);
purging frees what delegate stored, for good. Neither ever deletes a transcript
file Claude Code or Codex wrote: each dialog says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from core.models import Session
from tui.modals.confirm import ConfirmModal
from tui.shared import formatting as fmt
from tui.shared.safe_text import first_line

TRANSCRIPTS_KEPT = "Claude Code and Codex transcript files are never deleted."
DEPENDANTS_SHOWN = 5


def _about(session: Session, now: datetime) -> Text:
    """Which session: agent, id, title, size and when it was last used."""
    text = Text()
    text.append(f"{session.agent_id} · {fmt.short_id(session.conversation_id)}\n", "bold")
    text.append(first_line(session.shown_title or "(untitled)", 56) + "\n")
    text.append(
        f"{session.metrics.turns} turns · {fmt.size(session.metrics.bytes)} · "
        f"last used {fmt.ago(session.last_interacted_at, now)}\n\n",
        "dim",
    )
    return text


class ConfirmDismiss(ConfirmModal):
    """Returns True to archive, False to keep. "Keep" has the focus; ctrl+d archives."""

    DESTRUCTIVE_ID = "dismiss"
    destructive_label = "Archive (ctrl+d)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+d", "answer(True)", "Archive", id="dismiss.yes", tooltip="Archive the session"
        ),
        Binding("escape", "answer(False)", "Keep", id="dismiss.no", tooltip="Keep the session"),
    ]

    def __init__(self, session: Session, now: datetime) -> None:
        super().__init__()
        self.session = session
        self._now = now

    def question(self) -> Text:
        text = Text()
        text.append("Archive this session?\n\n", "bold")
        text.append_text(_about(self.session, self._now))
        text.append(
            "It leaves the list for the archive; nothing is deleted (ctrl+z brings it back). "
            + TRANSCRIPTS_KEPT,
            "dim",
        )
        return text


class ConfirmPurge(ConfirmModal):
    """Returns True to purge, False to keep. Only tab to "Purge", then enter, purges."""

    DESTRUCTIVE_ID = "purge"
    destructive_label = "Purge"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "Keep", id="purge.no", tooltip="Keep the session"),
    ]

    def __init__(
        self,
        session: Session,
        now: datetime,
        dependants: Sequence[Session] = (),
        dependant_count: int | None = None,
    ) -> None:
        """``dependants``: sessions that reference this one (sub-agents launched from
        it, forks, its hand-off chain), of ``dependant_count`` in all."""
        super().__init__()
        self.session = session
        self._now = now
        self.dependants = tuple(dependants)
        self.dependant_count = len(self.dependants) if dependant_count is None else dependant_count

    def question(self) -> Text:
        text = Text()
        text.append("Purge this archived session?\n\n", "bold")
        text.append_text(_about(self.session, self._now))
        if self.dependant_count:
            text.append_text(self._dependants())
        text.append(
            "What delegate stored for it is freed for good and an import will not bring it "
            "back. " + TRANSCRIPTS_KEPT,
            "dim",
        )
        return text

    def _dependants(self) -> Text:
        """The sessions that reference this one: purging it leaves them without it."""
        text = Text()
        text.append(
            f"{self.dependant_count} other session(s) depend on it"
            " (sub-agents go with it; forks and hand-off chains lose the link):\n",
            "bold yellow",
        )
        for other in self.dependants[:DEPENDANTS_SHOWN]:
            text.append(f"  {other.agent_id} · {fmt.short_id(other.conversation_id)} · ")
            text.append(first_line(other.shown_title or "(untitled)", 40) + "\n")
        if self.dependant_count > DEPENDANTS_SHOWN:
            text.append(f"  … and {self.dependant_count - DEPENDANTS_SHOWN} more\n")
        text.append("\n")
        return text
