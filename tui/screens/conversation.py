"""A delegate conversation full screen: its messages, the reply streaming, the follow-up box.

What ``enter`` opens for delegate's own sessions (scripted, OpenAI-compatible),
which no agent CLI keeps: the conversation is continued here rather than in a
terminal of its own. The messages are the preview's (:class:`PreviewPane`, a
longer page); the box at the bottom sends a follow-up into the same
conversation, and the reply streams in above it. A refused send keeps the
prompt in the box with the reason, as the follow-up modal does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import getters, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static, TextArea

from core.clock import Clock
from core.errors import DelegateError
from core.models import Session
from core.orchestrator import AgentOrchestrator
from tui.bridge import (
    HistoryPosted,
    RunActivityReceived,
    RunOutputReceived,
    RunsUpdated,
    SessionsUpdated,
    connect,
)
from tui.modals.follow_up import problem_text
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.preview import PreviewPane

MESSAGES_PER_PAGE = 30


def _nothing() -> None:
    pass


class ConversationScreen(ForwardsWorkerErrors, Screen[None]):
    """One delegate conversation; ``esc`` goes back to the list."""

    DEFAULT_CSS = """
    ConversationScreen #conversation { height: 1fr; }
    ConversationScreen #conversation-problem { color: $warning; height: auto; padding: 0 1; }
    ConversationScreen #conversation-box { height: 6; }
    ConversationScreen #conversation-error { color: $error; height: auto; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s,ctrl+enter",
            "send",
            "Send",
            id="conversation.send",
            priority=True,
            tooltip="Send the follow-up into this conversation",
        ),
        Binding(
            "escape",
            "back",
            "Back",
            id="conversation.back",
            tooltip="Back to the session list (a reply still streaming goes on)",
        ),
        Binding(
            "alt+up",
            "page_older",
            "Older",
            id="conversation.older",
            priority=True,
            tooltip="Older messages",
        ),
        Binding(
            "alt+down",
            "page_newer",
            "Newer",
            id="conversation.newer",
            priority=True,
            tooltip="Newer messages",
        ),
    ]

    conversation = getters.query_one(PreviewPane)
    box = getters.query_one("#conversation-box", TextArea)

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        session: Session,
        *,
        clock: Clock,
        quiet_s: float,
    ) -> None:
        super().__init__()
        self.orchestrator = orchestrator
        self.session = session
        self._clock = clock
        self._quiet_s = quiet_s
        self._sending = False
        self._disconnect: Callable[[], None] = _nothing

    def compose(self) -> ComposeResult:
        orch = self.orchestrator
        yield PreviewPane(
            orch.recent_messages,
            self._clock,
            size=MESSAGES_PER_PAGE,
            load_run=orch.latest_run,
            quiet_s=self._quiet_s,
            id="conversation",
        )
        problem = Static("", id="conversation-problem")
        problem.display = False  # a line only when there is something to say
        yield problem
        box = TextArea(id="conversation-box", soft_wrap=True, show_line_numbers=False)
        box.border_title = "Follow up"
        yield box
        yield Static("", id="conversation-error")
        yield Footer()

    def on_mount(self) -> None:
        self._disconnect = connect(self.orchestrator.bus, self)
        self.conversation.preview(self.session)
        self.box.focus()
        self._look_for_problems()

    def on_unmount(self) -> None:
        self._disconnect()
        self._disconnect = _nothing

    # --- the follow-up ---------------------------------------------------

    @work(
        group="conversation-check", exclusive=True, name="checking the session", exit_on_error=False
    )
    async def _look_for_problems(self) -> None:
        problem = await self.orchestrator.follow_up_problem(self.session.conversation_id)
        shown = self.query_one("#conversation-problem", Static)
        # As Text, never markup: the message may quote a path or an id from the store.
        shown.update(Text(problem_text(problem)) if problem is not None else "")
        shown.display = problem is not None

    def action_send(self) -> None:
        prompt = self.box.text
        if not prompt.strip():
            self._show_error("A follow-up needs a prompt: type what the delegate should do next.")
            return
        if not self._sending:
            self._sending = True
            self._send(prompt)

    @work(group="conversation-send", name="sending the follow-up", exit_on_error=False)
    async def _send(self, prompt: str) -> None:
        cid = self.session.conversation_id
        try:
            await self.orchestrator.delegate(prompt, conversation_id=cid)
        except DelegateError as exc:
            # Refused: the prompt stays in the box as typed, with the reason.
            self._show_error(f"Not sent — {problem_text(exc)}")
            return
        finally:
            self._sending = False
        self._show_error("")
        self.box.clear()
        await self._reload()

    def _show_error(self, text: str) -> None:
        self.query_one("#conversation-error", Static).update(Text(text))

    async def _reload(self) -> None:
        try:
            self.session = await self.orchestrator.get_session(self.session.conversation_id)
        except DelegateError:
            return  # gone (dismissed elsewhere): keep what is on screen
        self.conversation.preview(self.session)
        self._look_for_problems()

    @work(
        group="conversation-reload",
        exclusive=True,
        name="reloading the conversation",
        exit_on_error=False,
    )
    async def _reload_soon(self) -> None:
        await self._reload()

    # --- navigation ------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss(None)

    def action_page_older(self) -> None:
        if not self.conversation.page_older():
            self.notify("No older messages.", timeout=2)

    def action_page_newer(self) -> None:
        if not self.conversation.page_newer():
            self.notify("Already at the newest messages.", timeout=2)

    # --- events from the core --------------------------------------------

    def _mine(self, conversation_id: str) -> bool:
        return conversation_id == self.session.conversation_id

    def on_run_output_received(self, message: RunOutputReceived) -> None:
        self.conversation.append_live(message.event.conversation_id, message.event.text)

    def on_run_activity_received(self, message: RunActivityReceived) -> None:
        e = message.event
        self.conversation.show_activity(e.conversation_id, e.run_id, e.stderr_tail)

    def on_runs_updated(self, message: RunsUpdated) -> None:
        self.conversation.refresh_run(message.run_ids)

    def on_history_posted(self, message: HistoryPosted) -> None:
        if self._mine(message.event.conversation_id):
            self._reload_soon()

    def on_sessions_updated(self, message: SessionsUpdated) -> None:
        if any(self._mine(cid) for cid in message.changed):
            self._reload_soon()
