"""History cells: one event drawn from its description (core.event_text), and the cell
type each event reads as.

One generic cell draws every kind. Its type is named for the record the event reads
as (a follow-up that failed is a ``RunFailedCell``), made on first use from the
description's ``variant``, so a new event kind needs nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from core.event_text.catalog import describe
from core.event_text.model import EventText, Tone
from core.events import HistoryEvent
from tui.shared import formatting as fmt
from tui.shared.context_levels import LEVEL_STYLES
from tui.shared.safe_text import visible

Clock = Callable[[], datetime]


class HistoryCell(Static, can_focus=True):
    """A titled two-line record of one history event: what, who, when, then its detail."""

    DEFAULT_CSS = """
    HistoryCell { height: auto; padding: 0 1; border-left: outer $primary; margin-bottom: 0; }
    HistoryCell:focus { background: $boost; }
    HistoryCell.-failed { border-left: outer $error; }
    HistoryCell.-dismissed { border-left: outer $secondary; color: $text-muted; }
    HistoryCell.-started { border-left: outer $warning; }
    HistoryCell.-cancelled { border-left: outer $warning; color: $text-muted; }
    HistoryCell.-context { border-left: outer $warning; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Open session",
            id="history.open",
            tooltip="Jump to this cell's session in the picker",
        ),
    ]

    class Selected(Message):
        """Enter on a cell. Handle with ``on_history_cell_selected``."""

        def __init__(self, conversation_id: str) -> None:
            super().__init__()
            self.conversation_id = conversation_id

    def __init__(self, event: HistoryEvent, clock: Clock) -> None:
        said = describe(event)
        super().__init__(classes=_tone_class(said.tone))
        self.description: EventText = said
        self.event = event
        self._clock = clock
        # The session that has since continued the hand-off this cell says waits.
        self.successor_id: str | None = None

    def render(self) -> Text:
        e, said = self.event, self.description
        wraps = said.wraps  # a detail that is the news (a display line) wraps, never cut
        text = Text(no_wrap=not wraps, overflow="fold" if wraps else "ellipsis")
        text.append(said.title, "bold")
        # A capsule a person wrote has neither agent nor session: nothing to name.
        who = " · ".join(part for part in (e.agent_id, fmt.short_id(e.conversation_id)) if part)
        if who:
            text.append(f"  {visible(who)}")
        run_id = getattr(e, "run_id", None)
        if run_id:
            text.append(f" · run {fmt.short_id(run_id)}", "dim")
        text.append(
            f" · {fmt.ago(e.at, self._clock())}" if who else f"  {fmt.ago(e.at, self._clock())}",
            "dim",
        )
        text.append("\n")
        for span in said.detail:
            text.append(
                span.text, LEVEL_STYLES[span.level] if span.level is not None else span.style
            )
        return text

    def waiting_document(self) -> str | None:
        """The hand-off document this cell says waits for a person (None: nothing waits)."""
        return self.description.waiting

    def continued(self, successor_id: str) -> None:
        """A session continued the document this cell said waits: it says so from now on."""
        self.successor_id = successor_id
        self.description = describe(self.event, continued_in=successor_id)
        self.refresh(layout=True)

    def opens(self) -> str:
        """The session ``enter`` on the cell jumps to."""
        opens = self.description.opens
        return opens if opens is not None else self.event.conversation_id

    def action_open(self) -> None:
        if session := self.opens():
            self.post_message(self.Selected(session))
        else:
            self.notify("No session goes with this event.", timeout=3)


def _tone_class(tone: Tone) -> str:
    return f"-{tone.value}" if tone.value else ""


@cache
def cell_type(variant: str) -> type[HistoryCell]:
    """The cell type of a description's ``variant``: ``run_failed`` -> ``RunFailedCell``."""
    name = "".join(word.capitalize() for word in variant.split("_")) + "Cell"
    doc = f"A history cell of a {variant.replace('_', ' ')} event."
    return type(name, (HistoryCell,), {"__doc__": doc, "__module__": __name__})


def cell_for(event: HistoryEvent, clock: Clock) -> HistoryCell:
    """The cell that shows ``event``."""
    return cell_type(describe(event).variant)(event, clock)


# The cell types by the names the panel has always called them.
DelegateLaunchedCell = cell_type("delegate_launched")
DelegateFinishedCell = cell_type("delegate_finished")
FollowUpStartedCell = cell_type("follow_up_started")
FollowUpCompletedCell = cell_type("follow_up_completed")
RunFailedCell = cell_type("run_failed")
RunCancelledCell = cell_type("run_cancelled")
RunInterruptedCell = cell_type("run_interrupted")
SessionDismissedCell = cell_type("session_dismissed")
SessionRestoredCell = cell_type("session_restored")
SessionPurgedCell = cell_type("session_purged")
SessionRenamedCell = cell_type("session_renamed")
ContextThresholdCell = cell_type("context_threshold")
ChildClampedCell = cell_type("child_clamped")
HandoffWrittenCell = cell_type("handoff_written")
HandoffFailedCell = cell_type("handoff_failed")
HandoffModifiedCell = cell_type("handoff_modified")
SessionContinuedCell = cell_type("session_continued")
HandoffSettledCell = cell_type("handoff_settled")
CheckpointCell = cell_type("checkpoint")
CapsuleSavedCell = cell_type("capsule_saved")
CapsuleInjectedCell = cell_type("capsule_injected")
CapsuleGapCell = cell_type("capsule_gap")
CapsuleStaleCell = cell_type("capsule_stale")
ReturnAcceptedCell = cell_type("return_accepted")
ReturnRejectedCell = cell_type("return_rejected")
ChainEndedCell = cell_type("chain_ended")
