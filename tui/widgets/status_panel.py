"""The status panel: reusable sessions by state, footprint, running now, fullest meters,
and a hand-off waiting for a person (with the key that continues it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text
from textual import work
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from core.models import ContextDocument, Session
from tui.shared import formatting as fmt
from tui.shared.context_levels import DEFAULT_THRESHOLDS, ThresholdsFor
from tui.shared.safe_text import first_line
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.context_meter import meter_text

FULLEST_SHOWN = 3


@dataclass(frozen=True)
class WaitingHandoff:
    """A hand-off a person is to continue, and the session that wrote it (None: gone)."""

    document: ContextDocument
    session: Session | None


# () -> (counts by state plus "bytes", the fullest sessions, hand-offs waiting, newest first)
StatusLoader = Callable[[], Awaitable[tuple[dict[str, int], list[Session], list[WaitingHandoff]]]]

STATE_ORDER = ("idle", "ready", "running", "pending", "handed_off")


@dataclass(frozen=True)
class StatusSnapshot:
    """What the panel shows; built by the screen from orchestrator queries."""

    counts: dict[str, int] = field(default_factory=dict)
    fullest: tuple[Session, ...] = ()
    note: str = ""
    waiting: tuple[WaitingHandoff, ...] = ()

    @property
    def reusable(self) -> int:
        return sum(self.counts.get(state, 0) for state in STATE_ORDER)

    @property
    def total(self) -> int:
        """Every session the store counts, reusable or not."""
        return sum(v for k, v in self.counts.items() if k != "bytes")


class StatusPanel(ForwardsWorkerErrors, Static):
    """Always visible; the screen reloads it on every history event."""

    DEFAULT_CSS = """
    StatusPanel { height: auto; padding: 0 1; background: $boost; }
    """

    # Repainted on change; laid out again only when its height changes (``_watch_snapshot``):
    # the counts change with every batch an import commits.
    snapshot: reactive[StatusSnapshot] = reactive(StatusSnapshot)

    class Updated(Message):
        """Fresh counts are on show. Handle with ``on_status_panel_updated``."""

        def __init__(self, snapshot: StatusSnapshot) -> None:
            super().__init__()
            self.snapshot = snapshot

    def __init__(
        self,
        load: StatusLoader,
        *,
        thresholds: ThresholdsFor | None = None,
        shown: StatusSnapshot | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._load = load
        if shown is not None:  # read before the screen's first frame: its height is right
            self.set_reactive(StatusPanel.snapshot, shown)
        # How the key that continues a waiting hand-off reads (the screen sets it).
        self.continue_key = ""
        # The [context] thresholds that colour the fullest meters, by folder.
        self._thresholds = thresholds or (lambda cwd: DEFAULT_THRESHOLDS)

    @work(group="status", name="reading the status", exclusive=True, exit_on_error=False)
    async def reload(self, note: str = "") -> None:
        """Ask the store again; ``note`` is the italic line under the counts."""
        counts, fullest, waiting = await self._load()
        self.snapshot = StatusSnapshot(counts, tuple(fullest), note, tuple(waiting))
        self.post_message(self.Updated(self.snapshot))

    @property
    def lines_since_start(self) -> int:
        """Lines on show that a start's first frame lacks (the note, a waiting hand-off):
        the list below sits that much higher in that frame."""
        return bool(self.snapshot.waiting) + bool(self.snapshot.note)

    def _watch_snapshot(self, old: StatusSnapshot, new: StatusSnapshot) -> None:
        if _line_count(old) != _line_count(new):
            self.refresh(layout=True)

    def render(self) -> Group:
        snap = self.snapshot
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{snap.reusable} reusable", "bold")
        by_state = [
            f"{snap.counts[state]} {state.replace('_', '-')}"
            for state in STATE_ORDER
            if snap.counts.get(state)
        ]
        if by_state:
            text.append(" (" + ", ".join(by_state) + ")")
        text.append(f" · {fmt.size(snap.counts.get('bytes', 0))} on disk")
        running = snap.counts.get("running", 0) + snap.counts.get("pending", 0)
        text.append(" · ")
        text.append(f"{running} running now", "bold yellow" if running else "dim")
        lines = [text]
        if snap.fullest:
            fullest = Text("fullest: ", "dim", no_wrap=True, overflow="ellipsis")
            for i, session in enumerate(snap.fullest):
                if i:
                    fullest.append("   ")
                fullest.append(f"{session.agent_id} {fmt.short_id(session.conversation_id)} ")
                thresholds = self._thresholds(session.cwd)
                fullest.append_text(meter_text(session.context, thresholds=thresholds, bar_width=5))
            lines.append(fullest)
        if snap.waiting:
            lines.append(self._waiting_line(snap.waiting))
        if snap.note:
            lines.append(Text(snap.note, "italic", no_wrap=True, overflow="ellipsis"))
        return Group(*lines)

    def _waiting_line(self, waiting: tuple[WaitingHandoff, ...]) -> Text:
        """``⇢ hand-off waiting: echo 1a2b3c4d · Refactor … · ctrl+k continues it``."""
        newest = waiting[0]
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("⇢ hand-off waiting", "bold yellow")
        if len(waiting) > 1:
            line.append(f" (+{len(waiting) - 1} more)", "yellow")
        line.append(": ")
        session = newest.session
        if session is not None:
            line.append(f"{session.agent_id} {fmt.short_id(session.conversation_id)} · ")
            line.append(first_line(session.shown_title or "(untitled)", 60))
        else:
            line.append(first_line(newest.document.path.rsplit("/", 1)[-1], 60))
        if self.continue_key:
            line.append(" · ")
            line.append(f"{self.continue_key} continues it", "bold")
        return line


def _line_count(snap: StatusSnapshot) -> int:
    """The panel's height for ``snap`` (each line is cut, never wrapped): see ``render``."""
    return 1 + bool(snap.fullest) + bool(snap.waiting) + bool(snap.note)
