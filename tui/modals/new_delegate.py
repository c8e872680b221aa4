"""The launch form for a new delegate: agent, working directory, prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea


@dataclass(frozen=True)
class LaunchRequest:
    agent_id: str
    cwd: str
    prompt: str


class NewDelegate(ModalScreen[LaunchRequest | None]):
    """Returns what to launch, or None when cancelled."""

    DEFAULT_CSS = """
    NewDelegate { align: center middle; }
    NewDelegate > Vertical {
        width: 90%; max-width: 100; height: auto; padding: 1 2;
        border: thick $success; background: $surface;
    }
    NewDelegate Label { margin-top: 1; }
    NewDelegate TextArea { height: 6; }
    NewDelegate #launch-error { color: $error; height: auto; }
    NewDelegate #launch-hint { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s,ctrl+enter",
            "launch",
            "Launch",
            id="launch.send",
            priority=True,
            tooltip="Launch the delegate",
        ),
        Binding(
            "escape", "cancel", "Cancel", id="launch.cancel", tooltip="Close without launching"
        ),
    ]

    def __init__(self, agents: list[str], default_agent: str, cwd: str) -> None:
        super().__init__()
        self._agents = agents
        self._default_agent = default_agent
        self._cwd = cwd

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("[b]New delegate[/b]")
            yield Label("Agent")
            yield Select(
                [(name, name) for name in self._agents],
                value=self._default_agent,
                allow_blank=False,
                id="launch-agent",
            )
            yield Label("Working directory")
            yield Input(self._cwd, id="launch-cwd")
            yield Label("Prompt")
            yield TextArea(id="launch-prompt", soft_wrap=True)
            yield Static("", id="launch-error")
            yield Static("ctrl+s launch · esc cancel", id="launch-hint")

    def on_mount(self) -> None:
        self.query_one("#launch-prompt", TextArea).focus()

    def action_launch(self) -> None:
        prompt = self.query_one("#launch-prompt", TextArea).text
        cwd = self.query_one("#launch-cwd", Input).value.strip()
        error = self.query_one("#launch-error", Static)
        if not prompt.strip():
            error.update("A delegate needs a prompt: say what it should do.")
            return
        if not Path(cwd).expanduser().is_dir():
            error.update(Text(f"{cwd or '(empty)'} is not a directory."))  # as typed, no markup
            return
        agent = self.query_one("#launch-agent", Select).value
        self.dismiss(LaunchRequest(str(agent), cwd, prompt))

    def action_cancel(self) -> None:
        self.dismiss(None)
