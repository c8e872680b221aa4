"""The follow-up prompt box: multi-line, ``ctrl+s`` (or ``ctrl+enter``) sends.

The box knows before you type: when it opens it asks the core what would refuse
a follow-up now (a busy or pending session, the agent's binary missing, its
working folder gone) and says so above the input. Sending is done from inside
the box: a send the core refuses leaves the box open, the prompt as typed and
the reason under it, so nothing written is ever lost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from core.errors import AgentBusy, DelegateError
from core.models import Session
from tui.shared import formatting as fmt
from tui.shared.safe_text import first_line
from tui.shared.workers import ForwardsWorkerErrors

# () -> what would refuse a follow-up now, or None
ProblemCheck = Callable[[], Awaitable[DelegateError | None]]
# (prompt) -> None once the run started; raises the DelegateError that refused it
Sender = Callable[[str], Awaitable[None]]


def problem_text(error: DelegateError) -> str:
    """A refusal in its own words, with what to do about it when there is something."""
    text = f"{error.code}: {error.message}"
    if isinstance(error, AgentBusy):
        text += " — wait for it to finish (your prompt can wait here), or x to stop it"
    return text


class FollowUpPrompt(ForwardsWorkerErrors, ModalScreen[str | None]):
    """Returns the prompt sent, or None when cancelled.

    ``check`` is asked once when the box opens; ``send`` starts the follow-up
    (without it the box only returns the prompt and the caller sends it).
    """

    DEFAULT_CSS = """
    FollowUpPrompt { align: center middle; }
    /* On a short terminal the box scrolls; the refusal and the send key stay docked
       under it, always in view. */
    FollowUpPrompt > VerticalScroll {
        width: 90%; max-width: 100; height: auto; max-height: 100%; padding: 1 2;
        border: thick $primary; background: $surface;
    }
    FollowUpPrompt TextArea { height: 8; margin: 1 0 0 0; }
    FollowUpPrompt #follow-up-problem { color: $warning; height: auto; }
    FollowUpPrompt #follow-up-error { color: $error; height: auto; dock: bottom; }
    FollowUpPrompt #follow-up-hint { color: $text-muted; dock: bottom; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s,ctrl+enter",
            "send",
            "Send",
            id="follow_up.send",
            priority=True,
            tooltip="Send the follow-up into this conversation",
        ),
        Binding(
            "escape", "cancel", "Cancel", id="follow_up.cancel", tooltip="Close without sending"
        ),
    ]

    def __init__(
        self,
        session: Session,
        draft: str = "",
        *,
        check: ProblemCheck | None = None,
        send: Sender | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self._draft = draft
        self._check = check
        self._send = send
        self._sending = False

    def compose(self) -> ComposeResult:
        s = self.session
        heading = Text()
        heading.append("Follow up", "bold")
        heading.append(f"  {s.agent_id} · {fmt.short_id(s.conversation_id)} · ")
        heading.append(first_line(s.shown_title or "(untitled)", 60), "italic")
        with VerticalScroll(can_focus=False):
            yield Static(heading)
            problem = Static("", id="follow-up-problem")
            problem.display = False  # a line only when there is something to say
            yield problem
            yield TextArea(
                self._draft, id="follow-up-text", soft_wrap=True, show_line_numbers=False
            )
            yield Static("", id="follow-up-error")
            yield Static("ctrl+s send · esc cancel", id="follow-up-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()
        if self._check is not None:
            self._look_for_problems(self._check)

    @work(group="follow-up", name="checking the session", exit_on_error=False)
    async def _look_for_problems(self, check: ProblemCheck) -> None:
        problem = await check()
        shown = self.query_one("#follow-up-problem", Static)
        # As Text, never markup: the message may quote a path or an id from the store.
        shown.update(Text(problem_text(problem)) if problem is not None else "")
        shown.display = problem is not None

    def _show_error(self, text: str) -> None:
        self.query_one("#follow-up-error", Static).update(Text(text))

    def action_send(self) -> None:
        prompt = self.query_one(TextArea).text
        if not prompt.strip():
            self._show_error("A follow-up needs a prompt: type what the delegate should do next.")
            return
        if self._send is None:
            self.dismiss(prompt)
        elif not self._sending:
            self._sending = True
            self._send_now(self._send, prompt)

    @work(group="follow-up", name="sending the follow-up", exit_on_error=False)
    async def _send_now(self, send: Sender, prompt: str) -> None:
        try:
            await send(prompt)
        except DelegateError as exc:
            # Refused: the box stays, with the prompt as typed and the reason.
            self._show_error(f"Not sent — {problem_text(exc)}")
            return
        finally:
            self._sending = False
        self.dismiss(prompt)

    def action_cancel(self) -> None:
        self.dismiss(None)
