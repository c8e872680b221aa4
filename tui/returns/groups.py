"""The group view (``f3`` in the panel): compact returns, group by group.

Artifacts sessions on the left, newest first; on the right the highlighted one's
groups, each with its chain (developer → QA → tech lead → PM: each role's latest
status, the role it waits on) and its steps in order: role, status, where it routes,
its three lines, its hand-off file (``enter`` opens it in a read-only viewer) or,
for an invalid return, the rule it broke. Live: a return accepted or rejected, or a
chain ended, reloads what it touches (core events arrive through :mod:`tui.bridge`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import PurePath
from typing import ClassVar

from rich.text import Text
from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from core.clock import Clock, from_us, system_clock
from core.events import ChainEnded, ReturnAccepted, ReturnRejected
from core.orchestrator import AgentOrchestrator
from core.returns.display import missing_handoff
from core.returns.model import INVALID_RETURN, ReturnSession, ReturnStep
from tui.bridge import HistoryPosted, connect
from tui.modals.handoff_viewer import HandoffViewer
from tui.returns import look
from tui.returns.panel import (
    ChainKey,
    GroupChain,
    chain_ends,
    group_chains,
    return_sessions,
)
from tui.shared import formatting as fmt
from tui.shared.workers import ForwardsWorkerErrors

EMPTY_STATE = """[b]No compact returns yet.[/b]

A delegate launched as one role of a group records each of its returns here:
  • [b]delegate run --role developer --group AUTH "PROMPT"[/b] from the shell;
  • [b]delegate_agent[/b] with [b]agent_role[/b] and [b]group_id[/b] (add [b]"chain": true[/b]
    to have delegate run the routing: developer → QA → tech lead → PM).

Escape goes back to the sessions."""

RETURN_EVENTS = (ReturnAccepted, ReturnRejected, ChainEnded)


def session_prompt(session: ReturnSession, now: datetime) -> Text:
    """A session's row: its id, then groups, how many still go on, its last step's age."""
    text = Text(look.one_line(session.artifacts_session), "bold", no_wrap=True, overflow="ellipsis")
    text.append(f"\n  {look.count(session.groups, 'group')} · ")
    if session.ended:
        text.append("ended", "dim")
    else:
        text.append(f"{session.running} going on", "yellow")
    text.append(f" · {fmt.ago(session.last_at, now)}", "dim")
    return text


def chain_line(chain: GroupChain) -> Text:
    """``Developer READY_FOR_QA → QA ▶ next → TL · → PM ·``: each role of the cycle with
    its latest status, the role the group waits on, the roles not reached yet."""
    latest: dict[str, str] = {}
    for step in chain.steps:
        latest[step.role.value] = step.status
    text = Text(no_wrap=True, overflow="ellipsis")
    for index, role in enumerate(look.CHAIN):
        if index:
            text.append(" → ", "dim")
        text.append(look.role_label(role.value), "bold")
        if chain.next_role == role.value:
            text.append(" ▶ next", "bold cyan")
        elif (status := latest.get(role.value)) is not None:
            text.append(f" {look.one_line(status)}", look.status_style(status))
        else:
            text.append(" ·", "dim")
    others = [step.role for step in chain.steps if step.role not in look.CHAIN]
    if others:
        names = ", ".join(dict.fromkeys(look.role_label(role.value) for role in others))
        text.append(f"  (also {names})", "dim")
    return text


def group_heading(chain: GroupChain) -> Text:
    """``Group AUTH · 4 steps · done: BAZINGA``, then the chain line."""
    text = Text(f"Group {look.one_line(chain.group_id)}", "bold")
    text.append(f" · {look.count(len(chain.steps), 'step')} · ")
    last = chain.last
    if chain.done:
        text.append("done: ", "green")
        text.append(look.one_line(last.status), look.status_style(last.status))
    elif last.status == INVALID_RETURN:
        text.append("stopped: an invalid return", "bold red")
    elif chain.ended is not None:
        text.append(f"stopped: {look.chain_reason(chain.ended.reason)}", "yellow")
    elif chain.next_role is None:
        text.append(f"stopped: no route for {look.one_line(last.status)}", "yellow")
    else:
        text.append(f"next: {look.role_name(chain.next_role)}", "cyan")
    text.append("\n")
    text.append_text(chain_line(chain))
    return text


def step_text(step: ReturnStep, now: datetime) -> Text:
    """One step: role, status, where it routes, its hand-off file, age and size; its three
    lines; for an invalid return, the rule it broke and why."""
    text = Text()
    text.append(f"#{step.seq} ", "dim")
    text.append(look.role_name(step.role.value), "bold")
    text.append("  ")
    text.append(look.one_line(step.status), look.status_style(step.status))
    text.append(f" → {look.next_name(step.next_role)} · ")
    if step.handoff_path:
        text.append(look.one_line(PurePath(step.handoff_path).name), "underline")
    else:
        text.append(missing_handoff(step), "dim")
    text.append(
        f" · {fmt.ago(from_us(step.created_us), now)} · {fmt.tokens(step.tokens)} tokens", "dim"
    )
    for line in step.summary:
        text.append(f"\n   {look.one_line(line)}")
    if step.rule:
        text.append("\n   rule ", "dim")
        text.append(look.rule_words(step.rule), "bold red")
        if step.reason:
            text.append(f": {look.one_line(step.reason)}")
    return text


def _rewritten(step: ReturnStep, chains: list[GroupChain]) -> str:
    """Each role of a group keeps one hand-off file: a later step of the role (a loop
    back) wrote it again, and the viewer says so."""
    chain = next((c for c in chains if c.group_id == step.group_id), None)
    later = [
        s
        for s in (chain.steps if chain is not None else ())
        if s.seq > step.seq and s.handoff_path == step.handoff_path
    ]
    if not later:
        return ""
    return f"Step #{later[-1].seq} wrote this file again since: it holds that step's hand-off."


class StepRow(Static, can_focus=True):
    """A step of a group's chain; ``enter`` opens its hand-off file."""

    DEFAULT_CSS = """
    StepRow { height: auto; padding: 0 1; margin-left: 2; border-left: outer $primary; }
    StepRow:focus { background: $boost; }
    StepRow.-invalid { border-left: outer $error; }
    StepRow.-latest { border-left: outer $success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Hand-off",
            id="returns.open",
            tooltip="Open the step's hand-off file in a read-only viewer",
        ),
        Binding(
            "down",
            "move(1)",
            "Next step",
            id="returns.next",
            show=False,
            tooltip="The next step (in this group or the next)",
        ),
        Binding(
            "up",
            "move(-1)",
            "Previous step",
            id="returns.previous",
            show=False,
            tooltip="The previous step",
        ),
    ]

    class Chosen(Message):
        """Enter on a step. Handle with ``on_step_row_chosen``."""

        def __init__(self, step: ReturnStep, group: str) -> None:
            super().__init__()
            self.step = step
            self.group = group

    def __init__(self, step: ReturnStep, now: datetime, *, latest: bool) -> None:
        super().__init__(step_text(step, now))
        self.step = step
        self.set_class(step.status == INVALID_RETURN, "-invalid")
        self.set_class(latest and step.status != INVALID_RETURN, "-latest")

    def action_open(self) -> None:
        self.post_message(self.Chosen(self.step, self.step.group_id))

    def action_move(self, by: int) -> None:
        if by > 0:
            self.screen.focus_next(StepRow)
        else:
            self.screen.focus_previous(StepRow)


class ReturnGroupsScreen(ForwardsWorkerErrors, Screen[None]):
    """Artifacts sessions and, for the highlighted one, each group's chain and steps."""

    DEFAULT_CSS = """
    ReturnGroupsScreen #returns-title {
        dock: top; height: auto; padding: 0 1; background: $boost; text-style: bold;
    }
    ReturnGroupsScreen #returns-body { height: 1fr; }
    ReturnGroupsScreen #return-sessions { width: 34; height: 1fr; border: none; }
    ReturnGroupsScreen #return-groups { width: 1fr; height: 1fr; padding: 0 1; }
    ReturnGroupsScreen .group-heading { height: auto; margin-top: 1; }
    ReturnGroupsScreen #returns-empty { padding: 1 2; height: auto; }
    ReturnGroupsScreen.-empty #returns-body { display: none; }
    ReturnGroupsScreen #returns-empty { display: none; }
    ReturnGroupsScreen.-empty #returns-empty { display: block; }
    ReturnGroupsScreen.-narrow #returns-body { layout: vertical; }
    ReturnGroupsScreen.-narrow #return-sessions {
        width: 1fr; height: auto; max-height: 6; border-bottom: solid $primary;
    }
    """
    # Narrow terminals list the sessions over the groups, which keep the whole width.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="returns.back", tooltip="Back to the sessions"),
        Binding(
            "f5",
            "reload",
            "Reload",
            id="returns.reload",
            tooltip="Read the sessions and their steps again",
        ),
    ]

    title_bar = getters.query_one("#returns-title", Static)
    session_list = getters.query_one("#return-sessions", OptionList)
    groups_pane = getters.query_one("#return-groups", VerticalScroll)

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        clock: Clock = system_clock,
        focus: str | None = None,
    ) -> None:
        super().__init__()
        self.orchestrator = orchestrator
        self.clock = clock
        self.focus_session = focus  # the artifacts session to show first, when listed
        self.sessions: list[ReturnSession] = []
        self.shown: str | None = None  # the artifacts session whose groups are on show
        self.chains: list[GroupChain] = []
        self.loaded = False  # the sessions and the first groups are on screen
        self.shows = 0  # how many times groups were put on screen (tests wait on it)
        # How chains ended: read from the history once, then as the events arrive.
        self._stored_ends: dict[ChainKey, ChainEnded] | None = None
        self._live_ends: dict[ChainKey, ChainEnded] = {}
        self._mounted: str | None = None  # the session whose groups the pane holds
        self._disconnect: Callable[[], None] = lambda: None

    def compose(self) -> ComposeResult:
        yield Static("Compact returns", id="returns-title")
        with Horizontal(id="returns-body"):
            yield OptionList(id="return-sessions")
            yield VerticalScroll(id="return-groups")
        yield Static(Text.from_markup(EMPTY_STATE), id="returns-empty")
        yield Footer()

    def on_mount(self) -> None:
        self._disconnect = connect(self.orchestrator.bus, self)
        self._load()

    def on_unmount(self) -> None:
        self._disconnect()

    # --- loading ---------------------------------------------------------------

    @work(
        group="returns-load",
        name="loading the compact returns",
        exclusive=True,
        exit_on_error=False,
    )
    async def _load(self) -> None:
        """Read the sessions (and, opening, how chains ended); show the one in focus.

        Exclusive: a burst of events (a chain's steps) reloads once more, not once each.
        """
        if self._stored_ends is None:
            self._stored_ends = await chain_ends(self.orchestrator)
        sessions = await return_sessions(self.orchestrator)
        # Until something is on show, a reload (an event during the first) keeps the focus.
        keep = self.shown if self.loaded else self.focus_session
        self.sessions = sessions
        self._fill_sessions(keep)
        if not sessions:
            self.shown = None
            self.chains = []
            await self.groups_pane.remove_children()
            self._mounted = None
            self.set_class(True, "-empty")
            self.title_bar.update("Compact returns")
            self.loaded = True
            return
        self.set_class(False, "-empty")
        if not self.loaded:
            self.session_list.focus()
        target = keep if any(s.artifacts_session == keep for s in sessions) else None
        self._show_session(target or sessions[0].artifacts_session)

    def _fill_sessions(self, keep: str | None) -> None:
        now = self.clock()
        options = self.session_list
        options.clear_options()
        options.add_options(
            Option(session_prompt(session, now), id=session.artifacts_session)
            for session in self.sessions
        )
        ids = [s.artifacts_session for s in self.sessions]
        if ids:
            options.highlighted = ids.index(keep) if keep in ids else 0

    async def _show(self, session: str) -> None:
        """Put ``session``'s groups on the right (the focused step kept, when it still is)."""
        focused = self.focused.step.step_id if isinstance(self.focused, StepRow) else None
        ends = (self._stored_ends or {}) | self._live_ends
        self.chains = await group_chains(self.orchestrator, session, ends)
        listed = next((s for s in self.sessions if s.artifacts_session == session), None)
        steps = sum(len(chain.steps) for chain in self.chains)
        groups = len(self.chains)
        title = Text(f"Compact returns · {look.one_line(session)}")
        title.append(f" · {look.count(groups, 'group')}, {look.count(steps, 'step')}", "not bold")
        if listed is not None and not listed.ended:
            title.append(f" · {listed.running} going on", "yellow not bold")
        self.title_bar.update(title)
        now = self.clock()
        pane = self.groups_pane
        # A reload of the same session keeps where the reader was; another starts at the top.
        keep_y = pane.scroll_y if session == self._mounted else 0.0
        await pane.remove_children()
        widgets: list[Static] = []
        for chain in self.chains:
            widgets.append(Static(group_heading(chain), classes="group-heading"))
            for step in chain.steps:
                widgets.append(StepRow(step, now, latest=step is chain.last))
        await pane.mount_all(widgets)
        self._mounted = session
        if focused is not None:
            for row in pane.query(StepRow):
                if row.step.step_id == focused:
                    row.focus(scroll_visible=False)
                    break
        pane.call_after_refresh(pane.scroll_to, y=keep_y, animate=False)

    @on(OptionList.OptionHighlighted, "#return-sessions")
    def _session_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        session = event.option.id
        if session is not None and session != self.shown:
            self._show_session(session)

    @work(
        group="returns-show", name="loading a session's groups", exclusive=True, exit_on_error=False
    )
    async def _show_session(self, session: str) -> None:
        # One worker at a time mounts the pane (a newer request cancels an older one).
        self.shown = session
        await self._show(session)
        self.loaded = True
        self.shows += 1

    @on(OptionList.OptionSelected, "#return-sessions")
    def _session_chosen(self) -> None:
        """Enter on a session: into its steps."""
        self.focus_next(StepRow)

    # --- the viewer --------------------------------------------------------------

    @on(StepRow.Chosen)
    def _step_chosen(self, event: StepRow.Chosen) -> None:
        step = event.step
        if not step.handoff_path:
            if step.status == INVALID_RETURN:
                why = "An invalid return has no hand-off file: its rule and reason are on the step."
            elif step.document_id is not None:
                why = "This step's hand-off file was removed since it was written."
            else:
                why = "This step wrote no hand-off file."
            self.notify(why, timeout=4)
            return
        title = (
            f"Hand-off of the {look.role_name(step.role.value)} · Group"
            f" {look.one_line(event.group)} · #{step.seq} {look.one_line(step.status)}"
        )
        self.app.push_screen(
            HandoffViewer(
                title, step.handoff_path, role=step.role, note=_rewritten(step, self.chains)
            )
        )

    # --- live ------------------------------------------------------------------

    def on_history_posted(self, message: HistoryPosted) -> None:
        event = message.event
        if not isinstance(event, RETURN_EVENTS):
            return
        if isinstance(event, ChainEnded):
            self._live_ends[(event.artifacts_session, event.group_id)] = event
        self._load()

    # --- actions -----------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss(None)

    def action_reload(self) -> None:
        self._load()
