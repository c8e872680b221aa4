"""The launch form for a new session: agent, working directory, prompt, and the
context capsule its first prompt carries (none, the latest of the branch, or a file;
opened from the capsule editor, the capsule being edited until another is chosen).

The agents are listed real ones first: Claude Code and Codex when their CLIs
are found here, and OpenAI-compatible endpoints; the first of them is the
default unless the config names one. The scripted agents follow, labelled as
demo agents (their replies are canned). A real agent whose CLI is not found
comes last and says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea

from core.config import Settings
from core.errors import DelegateError, RunnerUnavailable
from core.runners.subprocess import resolve_binary
from tui.capsule_panel import (
    CAPSULE_FILE,
    LATEST_CAPSULE,
    NO_CAPSULE,
    latest_note,
    launch_capsule,
)
from tui.safe_text import visible

# The CLI each real runner starts when no binary is configured.
_CLI_NAMES = {"claude_code": "claude", "codex": "codex"}


@dataclass(frozen=True)
class LaunchRequest:
    agent_id: str
    cwd: str
    prompt: str
    capsule: str | None = None  # ``latest`` or a capsule file inside the repository


@dataclass(frozen=True)
class AgentChoice:
    """One agent in the form's list, as shown."""

    agent_id: str
    label: str
    real: bool  # a real agent (not scripted demo replies)
    available: bool  # its CLI is found here (always True for endpoints and demo agents)


def agent_choices(settings: Settings, env: Mapping[str, str] | None = None) -> list[AgentChoice]:
    """Every configured agent in launch order (real and available, demo, then missing)."""
    env = os.environ if env is None else env
    ready, demo, missing = [], [], []
    for name in sorted(settings.agents):
        config = settings.agents[name]
        about = f" · {config.description}" if config.description else ""
        if config.runner == "scripted":
            demo.append(
                AgentChoice(name, f"{name} · demo agent (scripted replies){about}", False, True)
            )
            continue
        cli = _CLI_NAMES.get(config.runner)
        if cli is not None:
            binary = config.binary or cli
            try:
                resolve_binary(binary, {**env, **config.env}, f"agents.{name}.binary")
            except RunnerUnavailable:
                missing.append(
                    AgentChoice(name, f"{name} · {binary} not found on PATH", True, False)
                )
                continue
        ready.append(AgentChoice(name, f"{name}{about}", True, True))
    return ready + demo + missing


def default_choice(settings: Settings, choices: list[AgentChoice]) -> str:
    """The config's default agent when it names one, else the first real agent found here."""
    if "default_agent" not in settings.model_fields_set:
        for choice in choices:
            if choice.real and choice.available:
                return choice.agent_id
    return settings.default_agent


class NewDelegate(ModalScreen[LaunchRequest | None]):
    """Returns what to launch, or None when cancelled."""

    DEFAULT_CSS = """
    NewDelegate { align: center middle; }
    /* The fields scroll (an 80x24 terminal holds half of them); the refusal and the
       send key stay docked under them, always in view. */
    NewDelegate > #launch-form {
        width: 90%; max-width: 100; height: auto; max-height: 100%; padding: 1 2;
        border: thick $success; background: $surface;
    }
    NewDelegate Label { margin-top: 1; }
    NewDelegate TextArea { height: 6; }
    NewDelegate #launch-error { color: $error; height: auto; dock: bottom; }
    NewDelegate #launch-hint { color: $text-muted; dock: bottom; }
    NewDelegate #launch-capsule-note { color: $text-muted; height: auto; }
    NewDelegate #launch-capsule-path { display: none; }
    NewDelegate.-capsule-file #launch-capsule-path { display: block; }
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

    def __init__(
        self,
        choices: list[AgentChoice],
        default_agent: str,
        cwd: str,
        *,
        capsule: Path | None = None,
    ) -> None:
        """``capsule``: the capsule the form starts with (the editor's), else none."""
        super().__init__()
        self.choices = choices
        self._default_agent = default_agent
        self._cwd = cwd
        self._capsule = capsule

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="launch-form", can_focus=False):
            yield Static("[b]New delegate[/b]")
            yield Label("Agent")
            yield Select(
                [(Text(choice.label), choice.agent_id) for choice in self.choices],
                value=self._default_agent,
                allow_blank=False,
                id="launch-agent",
            )
            yield Label("Working directory")
            yield Input(self._cwd, id="launch-cwd")
            yield Label("Prompt")
            yield TextArea(id="launch-prompt", soft_wrap=True)
            yield Label("Context capsule")
            yield Select(
                [
                    ("none", NO_CAPSULE),
                    ("the latest of the branch", LATEST_CAPSULE),
                    ("a file", CAPSULE_FILE),
                ],
                value=NO_CAPSULE if self._capsule is None else CAPSULE_FILE,
                allow_blank=False,
                id="launch-capsule",
            )
            yield Input(
                "" if self._capsule is None else str(self._capsule),
                placeholder=".delegate/capsules/<branch>/<time>.md",
                id="launch-capsule-path",
            )
            yield Static("", id="launch-capsule-note")
            yield Static("", id="launch-error")
            yield Static("ctrl+s launch · esc cancel", id="launch-hint")

    def on_mount(self) -> None:
        self._capsule_choice_changed()
        self.query_one("#launch-prompt", TextArea).focus()

    @on(Select.Changed, "#launch-capsule")
    @on(Input.Changed, "#launch-cwd")
    @on(Input.Changed, "#launch-capsule-path")
    def _capsule_choice_changed(self) -> None:
        """The path field for a file; for ``latest``, which capsule that is now; the
        capsule being edited, when that is the file named."""
        choice = self.query_one("#launch-capsule", Select).value
        self.set_class(choice == CAPSULE_FILE, "-capsule-file")
        note = ""
        if choice == LATEST_CAPSULE:
            note = latest_note(self.query_one("#launch-cwd", Input).value.strip())
        elif choice == CAPSULE_FILE and self._capsule is not None:
            named = self.query_one("#launch-capsule-path", Input).value.strip()
            if named == str(self._capsule):
                note = "the capsule being edited (saved): its body goes into the first prompt"
        self.query_one("#launch-capsule-note", Static).update(Text(visible(note)))

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
        choice = self.query_one("#launch-capsule", Select).value
        path = self.query_one("#launch-capsule-path", Input).value
        if choice == CAPSULE_FILE and not path.strip():
            error.update("Name the capsule file (inside the repository), or choose none.")
            return
        try:
            capsule = launch_capsule(cwd, str(choice), path)
        except DelegateError as exc:
            error.update(Text(f"{exc.code}: {exc.message}"))
            return
        agent = self.query_one("#launch-agent", Select).value
        self.dismiss(LaunchRequest(str(agent), cwd, prompt, capsule))

    def action_cancel(self) -> None:
        self.dismiss(None)
