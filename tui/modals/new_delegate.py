"""The launch form for a new session: agent, working directory, prompt, and the
context capsule its first prompt carries (none, the latest of the branch, or a file;
opened from the capsule editor, the capsule being edited until another is chosen).

Opened on a highlighted session, the form may launch a sub-agent of it ("Sub-agent
of"); its capsule may then be requested from that parent, and when the parent holds
context worth carrying (``core.capsules.offer``) and no capsule is chosen, the form
says so and offers both ways to carry it (seed 000: "if omitted, it offers to create
one").

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
from core.errors import DelegateError, NoAgentInstalled
from core.models import Session
from core.runners.default_agent import CLI_NAMES, cli_installed, default_agent
from tui.capsules.panel import (
    CAPSULE_FILE,
    LATEST_CAPSULE,
    NO_CAPSULE,
    latest_note,
    launch_capsule,
)
from tui.shared.safe_text import visible

NO_PARENT = ""
REQUEST_CAPSULE = "request"  # ask the parent for its capsule, then carry the draft


@dataclass(frozen=True)
class LaunchRequest:
    agent_id: str
    cwd: str
    prompt: str
    capsule: str | None = None  # ``latest`` or a capsule file inside the repository
    parent_id: str | None = None  # launch a sub-agent of this session
    request_capsule: bool = False  # ask the parent for its capsule first and carry it


@dataclass(frozen=True)
class ParentOffer:
    """The session highlighted when the form opened: a launch may be its sub-agent.

    ``holds``: what context it holds ("7 turns and 42,000 tokens of context") when that
    is worth a capsule, else "" (no offer is made)."""

    conversation_id: str
    short_id: str
    title: str
    holds: str = ""


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
        if not cli_installed(config, name, env):
            binary = config.binary or CLI_NAMES[config.runner]
            missing.append(AgentChoice(name, f"{name} · {binary} not found on PATH", True, False))
            continue
        ready.append(AgentChoice(name, f"{name}{about}", True, True))
    return ready + demo + missing


def default_choice(settings: Settings, choices: list[AgentChoice]) -> str:
    """The agent a launch without one would use (core's rule), else the first real one here."""
    try:
        chosen: str | None = default_agent(settings).agent_id
    except NoAgentInstalled:
        chosen = None
    if any(c.agent_id == chosen for c in choices):
        return str(chosen)
    available = [c.agent_id for c in choices if c.real and c.available]
    return available[0] if available else choices[0].agent_id


def parent_offer(session: Session) -> ParentOffer:
    """The form's "Sub-agent of" choice for ``session``, with what it holds when that is
    worth a capsule (``core.capsules.offer``'s rule)."""
    from core.capsules.offer import holds, worth_a_capsule

    return ParentOffer(
        session.conversation_id,
        session.conversation_id[:8],
        " ".join(session.shown_title.split())[:60],
        holds(session) if worth_a_capsule(session) else "",
    )


def capsule_offer(parent: ParentOffer, cwd: str) -> str:
    """What the form says when a sub-agent of a parent with context carries no capsule."""
    from core.capsules.offer import latest_capsule

    try:
        latest = latest_capsule(Path(cwd).expanduser()) if cwd else None
    except (OSError, DelegateError):
        latest = None
    start = f"{parent.short_id} holds {parent.holds} and this launch carries no capsule:"
    if latest is not None:
        return (
            f"{start} take the latest of the branch ({latest.name}), or request one from"
            f" {parent.short_id}."
        )
    return f"{start} request one from {parent.short_id} (the branch has none yet)."


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
        parent: ParentOffer | None = None,
        *,
        capsule: Path | None = None,
    ) -> None:
        """``parent``: the session a sub-agent may be launched under; ``capsule``: the
        capsule the form starts with (the editor's), else none."""
        super().__init__()
        self.choices = choices
        self._default_agent = default_agent
        self._cwd = cwd
        self.offer = parent
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
            if self.offer is not None:
                yield Label("Sub-agent of")
                yield Select(
                    [
                        ("none: a session of its own", NO_PARENT),
                        (
                            Text(visible(f"{self.offer.short_id} · {self.offer.title}")),
                            self.offer.conversation_id,
                        ),
                    ],
                    value=NO_PARENT,
                    allow_blank=False,
                    id="launch-parent",
                )
            yield Label("Prompt")
            yield TextArea(id="launch-prompt", soft_wrap=True)
            yield Label("Context capsule")
            yield Select(
                [
                    ("none", NO_CAPSULE),
                    ("the latest of the branch", LATEST_CAPSULE),
                    ("a file", CAPSULE_FILE),
                    *(
                        [(f"request one from {self.offer.short_id}", REQUEST_CAPSULE)]
                        if self.offer is not None
                        else []
                    ),
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

    def _parent_id(self) -> str | None:
        """The session chosen as the launch's parent (None: a session of its own)."""
        if self.offer is None:
            return None
        value = self.query_one("#launch-parent", Select).value
        return str(value) if value and value != NO_PARENT else None

    @on(Select.Changed, "#launch-capsule")
    @on(Select.Changed, "#launch-parent")
    @on(Input.Changed, "#launch-cwd")
    @on(Input.Changed, "#launch-capsule-path")
    def _capsule_choice_changed(self) -> None:
        """The path field for a file; for ``latest``, which capsule that is now; the
        capsule being edited, when that is the file named; for a sub-agent carrying
        nothing of a parent with context, the offer of a capsule."""
        choice = self.query_one("#launch-capsule", Select).value
        self.set_class(choice == CAPSULE_FILE, "-capsule-file")
        note = ""
        cwd = self.query_one("#launch-cwd", Input).value.strip()
        if choice == LATEST_CAPSULE:
            note = latest_note(cwd)
        elif choice == REQUEST_CAPSULE and self.offer is not None:
            note = (
                f"{self.offer.short_id} is asked for its capsule first; the launch carries"
                " the draft it writes."
            )
        elif (
            choice == NO_CAPSULE
            and self.offer is not None
            and self.offer.holds
            and self._parent_id() is not None
        ):
            note = capsule_offer(self.offer, cwd)
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
        parent = self._parent_id()
        if choice == CAPSULE_FILE and not path.strip():
            error.update("Name the capsule file (inside the repository), or choose none.")
            return
        agent = self.query_one("#launch-agent", Select).value
        if choice == REQUEST_CAPSULE:
            if parent is None:
                error.update("Choose the parent (Sub-agent of) to request its capsule.")
                return
            self.dismiss(LaunchRequest(str(agent), cwd, prompt, None, parent, True))
            return
        try:
            capsule = launch_capsule(cwd, str(choice), path)
        except DelegateError as exc:
            error.update(Text(f"{exc.code}: {exc.message}"))
            return
        self.dismiss(LaunchRequest(str(agent), cwd, prompt, capsule, parent))

    def action_cancel(self) -> None:
        self.dismiss(None)
