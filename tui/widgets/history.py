"""History cells: one widget per event kind, in a timeline pane (newest at the bottom)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from core.events import (
    CapsuleGap,
    CapsuleInjected,
    CapsuleSaved,
    CapsuleStale,
    ChainEnded,
    CheckpointMarked,
    ChildClamped,
    ContextThresholdCrossed,
    DelegateFinished,
    DelegateLaunched,
    FollowUpCompleted,
    FollowUpStarted,
    HandoffFailed,
    HandoffModified,
    HandoffSettled,
    HandoffWritten,
    HistoryEvent,
    ReturnAccepted,
    ReturnRejected,
    RunInterrupted,
    SessionContinued,
    SessionDismissed,
    SessionPurged,
    SessionRenamed,
    SessionRestored,
)
from core.models import ContextLevel, HandoffResult, RunStatus
from tui.returns import look
from tui.shared import formatting as fmt
from tui.shared.context_levels import LEVEL_STYLES
from tui.shared.safe_text import first_line, visible
from tui.shared.workers import ForwardsWorkerErrors

Clock = Callable[[], datetime]
HistoryLoader = Callable[[int], Awaitable[list[HistoryEvent]]]  # newest first


class HistoryCell(Static, can_focus=True):
    """Base cell: a titled two-line record of one history event."""

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

    title: ClassVar[str] = "event"
    css_class: ClassVar[str] = ""

    class Selected(Message):
        """Enter on a cell. Handle with ``on_history_cell_selected``."""

        def __init__(self, conversation_id: str) -> None:
            super().__init__()
            self.conversation_id = conversation_id

    def __init__(self, event: HistoryEvent, clock: Clock) -> None:
        super().__init__(classes=self.css_class)
        self.event = event
        self._clock = clock

    def heading(self) -> str:
        """The first words of the cell (some kinds word it by the event)."""
        return self.title

    def detail(self) -> Text:
        return Text()

    def render(self) -> Text:
        e = self.event
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(self.heading(), "bold")
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
        text.append_text(self.detail())
        return text

    def opens(self) -> str:
        """The session ``enter`` on the cell jumps to."""
        return self.event.conversation_id

    def action_open(self) -> None:
        if session := self.opens():
            self.post_message(self.Selected(session))
        else:
            self.notify("No session goes with this event.", timeout=3)


def _usage(e: FollowUpCompleted | DelegateFinished) -> str:
    tokens = e.usage.input_tokens + e.usage.output_tokens
    return f"{e.duration_s:.1f}s · {fmt.tokens(tokens)} tokens"


class DelegateLaunchedCell(HistoryCell):
    title = "▶ launched"

    def detail(self) -> Text:
        assert isinstance(self.event, DelegateLaunched)
        return Text(f"{self.event.mode.value} · {first_line(self.event.prompt, 100)}")


class DelegateFinishedCell(HistoryCell):
    title = "■ launch finished"

    def detail(self) -> Text:
        assert isinstance(self.event, DelegateFinished)
        return Text(f"{self.event.status.value} · {_usage(self.event)}")


class FollowUpStartedCell(HistoryCell):
    title = "↻ follow-up started"
    css_class = "-started"

    def detail(self) -> Text:
        assert isinstance(self.event, FollowUpStarted)
        return Text(first_line(self.event.prompt, 100))


class FollowUpCompletedCell(HistoryCell):
    title = "✓ follow-up completed"

    def detail(self) -> Text:
        assert isinstance(self.event, FollowUpCompleted)
        return Text(f"{_usage(self.event)} · {first_line(self.event.prompt, 80)}")


class RunFailedCell(HistoryCell):
    title = "✗ run failed"
    css_class = "-failed"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, FollowUpCompleted | DelegateFinished)
        text = Text(f"{e.status.value} · ")
        text.append(first_line(e.error or "no reason given", 100), "red")
        return text


class RunCancelledCell(HistoryCell):
    """Stopped by a person: not a failure, and the reply so far is kept."""

    title = "■ run cancelled"
    css_class = "-cancelled"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, FollowUpCompleted | DelegateFinished)
        return Text(f"after {e.duration_s:.1f}s · the reply so far is kept")


class RunInterruptedCell(HistoryCell):
    """Its process died (or stopped beating) before the run ended.

    A ``run_interrupted`` event (whoever noticed), or a run's own end event
    stored ``interrupted``.
    """

    title = "⚠ run interrupted"
    css_class = "-failed"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, RunInterrupted | FollowUpCompleted | DelegateFinished)
        why = e.reason if isinstance(e, RunInterrupted) else e.error
        return Text(first_line(why or "its process ended before the run did", 100))


class SessionDismissedCell(HistoryCell):
    """Dismissed: moved into the archive (kept, restorable)."""

    title = "⌫ archived"
    css_class = "-dismissed"

    def detail(self) -> Text:
        assert isinstance(self.event, SessionDismissed | SessionRestored | SessionPurged)
        return Text(first_line(self.event.title or "(untitled)", 100))


class SessionRestoredCell(SessionDismissedCell):
    title = "↺ restored"
    css_class = ""


class SessionPurgedCell(SessionDismissedCell):
    title = "✕ purged"


class SessionRenamedCell(HistoryCell):
    title = "✎ renamed"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, SessionRenamed)
        if e.name is None:
            return Text(f"name cleared · {first_line(e.title or '(untitled)', 80)}")
        return Text(first_line(e.name, 100))


# --- context: thresholds, clamps, hand-offs, continuations, checkpoints -----

# What each threshold means for the session, as its cell says it.
_LEVEL_MEANS = {
    ContextLevel.NOTIFY: "warning level",
    ContextLevel.REMINDER: "reminder: a hand-off comes next",
    ContextLevel.HANDOFF: "hand-off level: a hand-off document is written",
    ContextLevel.FORCE: "force level: delegate sends it no more prompts",
}


class ContextThresholdCell(HistoryCell):
    """The session's context crossed a threshold (once per level, ever)."""

    css_class = "-context"

    def heading(self) -> str:
        assert isinstance(self.event, ContextThresholdCrossed)
        estimate = fmt.ESTIMATE if self.event.estimated else ""
        return f"▲ context at {estimate}{self.event.percent:.0f}%"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, ContextThresholdCrossed)
        means = _LEVEL_MEANS.get(e.level, e.level.value)
        figures = f"{fmt.tokens(e.used_tokens)} of {fmt.tokens(e.limit_tokens)} tokens"
        text = Text()
        text.append(means, LEVEL_STYLES[e.level])
        text.append(f" ({figures})" if e.level is ContextLevel.NOTIFY else f" · {figures}")
        return text


class ChildClampedCell(HistoryCell):
    """A sub-agent got a smaller window than this session's (its model's limit)."""

    title = "⇲ child clamped"

    def opens(self) -> str:
        assert isinstance(self.event, ChildClamped)
        return self.event.child_id

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, ChildClamped)
        window = fmt.tokens(e.parent_limit_tokens)
        return Text(
            f"{visible(e.child_agent_id)} · {fmt.short_id(e.child_id)} clamped to"
            f" {fmt.tokens(e.limit_tokens)} tokens (this window {window})"
        )


def _file_name(path: str) -> str:
    return visible(path.rsplit("/", 1)[-1]) or "(no file)"


class WaitingHandoffCell(HistoryCell):
    """A cell about a hand-off that waited for a person: once a session continues that
    document (a later ``session_continued`` naming it), it says so, live, and ``enter``
    opens the successor."""

    successor_id: str | None = None

    def waiting_document(self) -> str | None:
        """The document this cell says waits for a person (None: it says nothing waits)."""
        return None

    def continued(self, successor_id: str) -> None:
        self.successor_id = successor_id
        self.refresh(layout=True)

    def opens(self) -> str:
        return self.successor_id or self.event.conversation_id


class HandoffWrittenCell(WaitingHandoffCell):
    """A hand-off document was written; pending: a person continues it."""

    def waiting_document(self) -> str | None:
        assert isinstance(self.event, HandoffWritten)
        return self.event.document_id if self.event.pending else None

    def heading(self) -> str:
        assert isinstance(self.event, HandoffWritten)
        if not self.event.pending:
            return "⇢ hand-off written"
        return "⇢ hand-off continued" if self.successor_id else "⇢ hand-off waiting"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, HandoffWritten)
        by = {"agent": "by the agent", "facts": "from facts"}.get(e.producer, e.producer)
        text = Text(f"{visible(by)} · {_file_name(e.path)}")
        if self.successor_id:
            text.append(f" · continued in {fmt.short_id(visible(self.successor_id))}", "cyan")
        elif e.pending:
            text.append(" · waiting for you to continue it", "bold yellow")
        return text


class HandoffFailedCell(HistoryCell):
    title = "✗ hand-off failed"
    css_class = "-failed"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, HandoffFailed)
        stage = {"write": "writing", "spawn": "starting the new session"}.get(e.stage, e.stage)
        text = Text(f"{stage}: ")
        text.append(first_line(e.reason, 100), "red")
        text.append(" · retried at the next turn" if e.stage == "write" else "")
        return text


class HandoffModifiedCell(HistoryCell):
    """A hand-off edited on disk since delegate wrote it: not given to an agent."""

    title = "⚠ hand-off changed"
    css_class = "-failed"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, HandoffModified)
        text = Text(f"{_file_name(e.path)} · ")
        text.append("edited since delegate wrote it: not injected", "bold yellow")
        text.append(" · review it: delegate handoff show")
        return text


class SessionContinuedCell(HistoryCell):
    """Work moved on to a new session; ``enter`` opens that one."""

    title = "→ continued"

    def opens(self) -> str:
        assert isinstance(self.event, SessionContinued)
        return self.event.successor_id

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, SessionContinued)
        how = "from its hand-off" if e.document_id else "without a hand-off document"
        return Text(f"in {fmt.short_id(e.successor_id)} {how}")


class HandoffSettledCell(WaitingHandoffCell):
    """What a hand-off did, whatever it was: the continuation layer's one outcome.

    ``enter`` opens the session the work continues in, else the session itself.
    """

    HEADINGS: ClassVar[dict[HandoffResult, str]] = {
        HandoffResult.CONTINUED: "⇢ handed off",
        HandoffResult.PENDING: "⇢ hand-off waiting",
        HandoffResult.SPAWN_FAILED: "✗ hand-off not continued",
        HandoffResult.WRITE_FAILED: "✗ hand-off not written",
        HandoffResult.ALREADY: "⇢ handed off before",
        HandoffResult.NOT_DONE: "· no hand-off",
    }

    def __init__(self, event: HistoryEvent, clock: Clock) -> None:
        super().__init__(event, clock)
        assert isinstance(event, HandoffSettled)
        if event.outcome.result in (HandoffResult.SPAWN_FAILED, HandoffResult.WRITE_FAILED):
            self.add_class("-failed")

    def waiting_document(self) -> str | None:
        assert isinstance(self.event, HandoffSettled)
        outcome = self.event.outcome
        return outcome.document.document_id if outcome.pending and outcome.document else None

    def heading(self) -> str:
        assert isinstance(self.event, HandoffSettled)
        if self.successor_id:
            return "⇢ hand-off continued"
        return self.HEADINGS[self.event.outcome.result]

    def opens(self) -> str:
        assert isinstance(self.event, HandoffSettled)
        return self.successor_id or self.event.outcome.successor_id or self.event.conversation_id

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, HandoffSettled)
        o = e.outcome
        text = Text()
        if o.document is not None:
            text.append(f"written · {_file_name(o.document.path)}")
        match o.result:
            case HandoffResult.CONTINUED | HandoffResult.ALREADY:
                text.append(f" · continues in {fmt.short_id(o.successor_id or '')}")
            case HandoffResult.PENDING | HandoffResult.SPAWN_FAILED if self.successor_id:
                text.append(f" · continued in {fmt.short_id(visible(self.successor_id))}", "cyan")
            case HandoffResult.PENDING:
                text.append(" · waiting for you to continue it", "bold yellow")
            case HandoffResult.SPAWN_FAILED:
                text.append(" · ")
                text.append(first_line(o.failure or "the new session did not start", 80), "red")
                text.append(" · waiting for you (HANDOFF_PENDING.md)", "bold yellow")
            case HandoffResult.WRITE_FAILED:
                # The reason names the folder it was to be written under.
                text.append(first_line(o.failure or "nothing written", 100), "red")
                force = f"{o.force_percent}%" if o.force_percent else "the force level"
                text.append(f" · it keeps working; past {force} it gets no prompt")
            case HandoffResult.NOT_DONE:
                text.append(first_line(o.failure or "", 100))
        return text


class CheckpointCell(HistoryCell):
    """A checkpoint marked, a session forked from one, or restored to one."""

    def heading(self) -> str:
        e = self.event
        assert isinstance(e, CheckpointMarked)
        return "⑂ forked" if e.forked_to else "↶ restored" if e.restored else "⚑ checkpoint"

    def opens(self) -> str:
        assert isinstance(self.event, CheckpointMarked)
        return self.event.forked_to or self.event.conversation_id

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, CheckpointMarked)
        if e.forked_to:
            at = fmt.message_number(e.seq)
            return Text(f"from message {at} into {fmt.short_id(e.forked_to)}")
        if e.restored:
            at = fmt.message_number(e.seq)
            return Text(f"to message {at} (the state before is kept in an archived copy)")
        label = f" · {first_line(e.label, 80)}" if e.label else ""
        return Text(f"at message {fmt.message_number(e.seq)}{label}")


# --- capsules: saved, carried by a launch, a gap reported, gone stale ---------


def _capsule_file(path: str) -> str:
    """``<branch>/<stamp>.md``: where a capsule sits under the repository's capsules."""
    return visible("/".join(path.rsplit("/", 2)[-2:])) or "(no file)"


class CapsuleSavedCell(HistoryCell):
    """A capsule saved; a draft is the agent's answer, waiting for a person's review."""

    def heading(self) -> str:
        assert isinstance(self.event, CapsuleSaved)
        return "◆ capsule drafted" if self.event.draft else "◆ capsule saved"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, CapsuleSaved)
        by = {"agent": "by the agent", "person": "by you"}.get(e.producer, e.producer)
        text = Text(f"{visible(by)} · {_capsule_file(e.path)}")
        if e.draft:
            text.append(" · waiting for your review", "bold yellow")
        return text


class CapsuleInjectedCell(HistoryCell):
    """A launch whose first prompt carried a capsule (and what a person accepted)."""

    title = "◆ launched with a capsule"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, CapsuleInjected)
        text = Text(fmt.capsule_label(e.document_id, e.digest))
        text.append(f" · {_capsule_file(e.path)}")
        if e.accepted:
            text.append(f" · accepted: {visible(', '.join(e.accepted))}", "yellow")
        return text


class CapsuleGapCell(HistoryCell):
    """The session said its capsule lacked something it needed."""

    title = "⚠ capsule gap"
    css_class = "-context"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, CapsuleGap)
        return Text(first_line(e.note or "(no note)", 100), "yellow")


class CapsuleStaleCell(HistoryCell):
    """Files the capsule references changed since it was written."""

    title = "⚠ capsule stale"
    css_class = "-context"
    FILES_SHOWN: ClassVar[int] = 3

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, CapsuleStale)
        shown = ", ".join(visible(path) for path in e.changed[: self.FILES_SHOWN])
        more = len(e.changed) - self.FILES_SHOWN
        files = f"{shown} (+{more})" if more > 0 else shown
        count = f"{len(e.changed)} file{'s' if len(e.changed) != 1 else ''} changed"
        return Text(f"{_capsule_file(e.path)} · {count}: {files}")


# --- compact returns: a role's return accepted or rejected, a chain ended ------


class _WrappedDetail(HistoryCell):
    """A cell whose text wraps: a display line's three lines are the news, not to be cut."""

    def render(self) -> Text:
        text = super().render()
        text.no_wrap = False
        text.overflow = "fold"
        return text


def _group(artifacts_session: str, group_id: str) -> str:
    return f"group {look.one_line(group_id)} of {look.one_line(artifacts_session)}"


class ReturnAcceptedCell(_WrappedDetail):
    """A role's valid compact return: the seed's display line."""

    def heading(self) -> str:
        assert isinstance(self.event, ReturnAccepted)
        return f"↩ return · {look.role_label(self.event.role)}"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, ReturnAccepted)
        return Text(look.accepted_line(e))


class ReturnRejectedCell(_WrappedDetail):
    """A role's final message broke the protocol: which rule, why, and its size."""

    css_class = "-failed"

    def heading(self) -> str:
        assert isinstance(self.event, ReturnRejected)
        return f"✗ return rejected · {look.role_label(self.event.role)}"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, ReturnRejected)
        text = Text(f"{_group(e.artifacts_session, e.group_id)} · ")
        text.append(look.rule_words(e.rule), "bold red")
        text.append(f": {first_line(e.reason or 'no reason given', 160)}")
        text.append(f" · {fmt.tokens(e.tokens)} tokens", "dim")
        return text


class ChainEndedCell(HistoryCell):
    """A group's chain run by delegate stopped: where, after how many steps, and why."""

    def heading(self) -> str:
        assert isinstance(self.event, ChainEnded)
        return "✓ chain done" if self.event.reason == "end" else "■ chain stopped"

    def detail(self) -> Text:
        e = self.event
        assert isinstance(e, ChainEnded)
        steps = f"{e.steps} step{'s' if e.steps != 1 else ''}"
        text = Text(f"{_group(e.artifacts_session, e.group_id)} · {steps} · ")
        text.append(look.one_line(e.final_status), look.status_style(e.final_status))
        text.append(f" · {look.chain_reason(e.reason)}")
        return text

    def __init__(self, event: HistoryEvent, clock: Clock) -> None:
        super().__init__(event, clock)
        reason = event.reason if isinstance(event, ChainEnded) else "end"
        # A chain a failure stopped is marked as one; any other stop short of the end
        # waits on a person, as a context warning does.
        if reason in ("invalid", "failed"):
            self.add_class("-failed")
        elif reason != "end":
            self.add_class("-context")


EventKey = tuple[str, str, str | None, datetime]


def event_key(event: HistoryEvent) -> EventKey:
    """What makes a history event the same event wherever it came from."""
    return (event.kind, event.conversation_id, getattr(event, "run_id", None), event.at)


def cell_for(event: HistoryEvent, clock: Clock) -> HistoryCell:
    """The cell class that renders ``event``."""
    if isinstance(event, FollowUpCompleted | DelegateFinished):
        if event.status is RunStatus.CANCELLED:
            return RunCancelledCell(event, clock)
        if event.status is RunStatus.INTERRUPTED:
            return RunInterruptedCell(event, clock)
        if event.status is not RunStatus.COMPLETED:
            return RunFailedCell(event, clock)
    cell_class: type[HistoryCell] = {
        "delegate_launched": DelegateLaunchedCell,
        "delegate_finished": DelegateFinishedCell,
        "follow_up_started": FollowUpStartedCell,
        "follow_up_completed": FollowUpCompletedCell,
        "session_dismissed": SessionDismissedCell,
        "session_restored": SessionRestoredCell,
        "session_renamed": SessionRenamedCell,
        "session_purged": SessionPurgedCell,
        "run_interrupted": RunInterruptedCell,
        "context_threshold": ContextThresholdCell,
        "child_clamped": ChildClampedCell,
        "handoff_written": HandoffWrittenCell,
        "handoff_failed": HandoffFailedCell,
        "handoff_changed": HandoffModifiedCell,
        "session_continued": SessionContinuedCell,
        "handoff_settled": HandoffSettledCell,
        "checkpoint_marked": CheckpointCell,
        "capsule_saved": CapsuleSavedCell,
        "capsule_injected": CapsuleInjectedCell,
        "capsule_gap": CapsuleGapCell,
        "capsule_stale": CapsuleStaleCell,
        "return_accepted": ReturnAcceptedCell,
        "return_rejected": ReturnRejectedCell,
        "chain_ended": ChainEndedCell,
    }.get(event.kind, HistoryCell)
    return cell_class(event, clock)


class HistoryTimeline(ForwardsWorkerErrors, VerticalScroll):
    """Cells oldest to newest; keeps the latest ``MAX_CELLS``."""

    MAX_CELLS = 200
    ON_OPEN = 50  # events loaded when the pane opens

    DEFAULT_CSS = """
    HistoryTimeline { height: 1fr; }
    HistoryTimeline > #history-empty { color: $text-muted; padding: 0 1; }
    """

    def __init__(
        self,
        load: HistoryLoader,
        clock: Clock,
        *,
        load_on_mount: bool = True,
        id: str | None = None,
    ) -> None:
        """``load_on_mount=False``: the owner calls :meth:`load` when it is time."""
        super().__init__(id=id)
        self._load = load
        self._load_on_mount = load_on_mount
        self._clock = clock
        # Keys of the cells on show: the same event can arrive twice (from this
        # process's bus and again as another process's store change, or in the
        # first load and live), and is shown once.
        self._shown: set[EventKey] = set()

    def compose(self) -> ComposeResult:
        yield Static(
            "No history yet: follow-ups, launches and dismissals appear here.", id="history-empty"
        )

    def on_mount(self) -> None:
        if self._load_on_mount:
            self._load_latest()

    def load(self) -> None:
        """Show the latest events (for an owner that deferred the load on mount)."""
        self._load_latest()

    @work(group="history-load", name="loading the history", exit_on_error=False)
    async def _load_latest(self) -> None:
        events = await self._load(self.ON_OPEN)
        self.add_events(list(reversed(events)))

    def add_events(self, events: list[HistoryEvent]) -> None:
        """Append events (oldest first) as cells, each once, and keep the newest in view."""
        fresh = []
        for event in events:
            key = event_key(event)
            if key not in self._shown:
                self._shown.add(key)
                fresh.append(event)
        if not fresh:
            return
        for placeholder in self.query("#history-empty"):
            placeholder.remove()
        new_cells = [cell_for(e, self._clock) for e in fresh]
        self._mark_continued([*self.query(WaitingHandoffCell), *new_cells], fresh)
        mounted = self.mount_all(new_cells)
        cells = list(self.query(HistoryCell))
        for stale in cells[: max(0, len(cells) - self.MAX_CELLS)]:
            self._shown.discard(event_key(stale.event))
            stale.remove()

        async def newest_in_view() -> None:
            # Mounting is deferred: scrolled once the cells are in and laid out.
            await mounted
            self.call_after_refresh(self._follow_newest)

        self.call_later(newest_in_view)

    @staticmethod
    def _mark_continued(cells: list[HistoryCell], events: list[HistoryEvent]) -> None:
        """Cells saying a hand-off waits, whose document a session in ``events`` continued,
        say it was continued (and by whom) from now on."""
        continued = {
            e.document_id: e.successor_id
            for e in events
            if isinstance(e, SessionContinued) and e.document_id
        }
        if not continued:
            return
        for cell in cells:
            if not isinstance(cell, WaitingHandoffCell):
                continue
            document = cell.waiting_document()
            if document is not None and document in continued:
                cell.continued(continued[document])

    def _follow_newest(self) -> None:
        """Scroll to the newest cell; once the cells overflow, stay anchored there, so a
        cell whose height settles later (wrapping) still leaves the newest in view. (A
        short timeline is not anchored: anchored content sits at the bottom.)"""
        if self.max_scroll_y > 0 and not self.is_anchored:
            self.anchor()
        self.scroll_end(animate=False)
