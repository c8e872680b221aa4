"""The capsule editor: a context capsule written from the keyboard, checked as you type.

The text area holds the capsule's Markdown (the template for a new one). Beside it:
the token meter against the body's budget (amber from 80%, red over), the outline
(enter jumps to a section) and the problems list (enter jumps to the line). Checks
run in a worker thread a moment after the last keystroke, never on the event loop.

Pushed by the panel for the highlighted session, or run on its own by
``delegate capsule edit [PATH]`` (:mod:`tui.capsule_app`). It dismisses with the path
it last saved (None when nothing was saved).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from core.capsules.model import DEFAULT_PROMPT_CEILING, SECTIONS
from core.capsules.secrets import secret_problems
from core.clock import Clock, system_clock
from core.documents.handoff_files import read_handoff_file
from core.documents.problems import Problem
from core.errors import DelegateError
from core.orchestrator import AgentOrchestrator
from tui.capsule_report import CapsuleReport, capsule_report
from tui.safe_text import first_line
from tui.workers import ForwardsWorkerErrors

CHECK_DELAY = 0.4
"""Seconds of quiet typing before the checks run again (tests shrink it)."""


def capsule_problems(repo: Path, path: Path | None, text: str, ceiling: int) -> list[Problem]:
    """Every check of the capsule (runs in a worker thread: it reads git and files)."""
    return secret_problems(text)


def meter_text(report: CapsuleReport) -> Text:
    """``tokens 523 / 1,200 · 44%``, amber from 80% of the budget, red over it."""
    share = report.tokens / report.budget if report.budget else 0.0
    style = {"ok": "green", "near": "yellow", "over": "bold red"}[report.level]
    text = Text("tokens ", "dim")
    text.append(f"{report.tokens:,} / {report.budget:,}", style)
    text.append(f" · {share:.0%}", style)
    if report.level == "over":
        text.append(" over budget", style)
    return text


def problem_prompt(problem: Problem) -> Text:
    """One row of the problems list: line, code, message."""
    style = "red" if problem.severity == "error" else "yellow"
    text = Text(f"{problem.line:>4} ", "dim")
    text.append(problem.code, style)
    text.append(f"  {first_line(problem.message, 200)}")
    return text


class CapsuleEditorScreen(ForwardsWorkerErrors, Screen[Path | None]):
    """Edit one capsule of ``repo``: ``path`` (None: a new one from the template),
    written for ``session`` (its source session, for highlights, drafts, follow-ups)."""

    DEFAULT_CSS = """
    CapsuleEditorScreen #capsule-title { height: 1; padding: 0 1; background: $panel; }
    CapsuleEditorScreen #capsule-body { height: 1fr; }
    CapsuleEditorScreen #capsule-side { width: 40; border-right: solid $panel-lighten-1; }
    CapsuleEditorScreen #capsule-meter { height: 1; padding: 0 1; }
    CapsuleEditorScreen .capsule-label { height: 1; padding: 0 1; color: $text-muted; }
    CapsuleEditorScreen #capsule-outline { height: auto; max-height: 12; border: none; }
    CapsuleEditorScreen #capsule-problems { height: 1fr; border: none; }
    CapsuleEditorScreen #capsule-text { width: 1fr; border: none; }
    CapsuleEditorScreen #capsule-status { height: 1; padding: 0 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="capsule.save", tooltip="Save the capsule"),
        Binding(
            "ctrl+o",
            "focus_outline",
            "Outline",
            id="capsule.outline",
            tooltip="Jump between the capsule's sections",
        ),
        Binding(
            "f8",
            "next_problem",
            "Next problem",
            id="capsule.next_problem",
            tooltip="Move the cursor to the next problem's line",
        ),
        Binding("escape", "close", "Close", id="capsule.close", tooltip="Leave the editor"),
    ]

    text_area = getters.query_one("#capsule-text", TextArea)
    outline = getters.query_one("#capsule-outline", OptionList)
    problems = getters.query_one("#capsule-problems", OptionList)
    meter = getters.query_one("#capsule-meter", Static)
    status = getters.query_one("#capsule-status", Static)

    class Checked(Message):
        """A check finished (``on_capsule_editor_screen_checked``)."""

        def __init__(self, text: str, report: CapsuleReport) -> None:
            super().__init__()
            self.text = text
            self.report = report

    def __init__(
        self,
        repo: Path,
        path: Path | None = None,
        session: str | None = None,
        *,
        orchestrator: AgentOrchestrator | None = None,
        clock: Clock = system_clock,
        check_delay: float = CHECK_DELAY,
        prompt_ceiling: int | None = None,
    ) -> None:
        super().__init__()
        self.repo = repo
        self.path = path
        self.session = session
        self.orchestrator = orchestrator
        self.clock = clock
        self.check_delay = check_delay
        self.prompt_ceiling = prompt_ceiling or DEFAULT_PROMPT_CEILING
        self.report = CapsuleReport()
        self.saved_text: str | None = None
        self._check_timer: Timer | None = None
        self.checked_text: str | None = None  # the text the shown report is about
        self.checks_run = 0

    # --- layout --------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="capsule-title")
        with Horizontal(id="capsule-body"):
            with Vertical(id="capsule-side"):
                yield Static(meter_text(self.report), id="capsule-meter")
                yield Static("Outline (ctrl+o)", classes="capsule-label")
                yield OptionList(id="capsule-outline")
                yield Static("Problems (f8)", classes="capsule-label")
                yield OptionList(id="capsule-problems")
            yield TextArea(
                "",
                id="capsule-text",
                language="markdown",
                soft_wrap=False,
                show_line_numbers=True,
            )
        yield Static("", id="capsule-status")
        yield Footer()

    def _title(self) -> Text:
        text = Text("capsule  ", "bold")
        text.append(str(self.path) if self.path is not None else "(new, not saved)")
        if self.session:
            text.append(f"  · session {self.session[:8]}", "dim")
        return text

    def on_mount(self) -> None:
        self._load()

    @work(exit_on_error=False, group="capsule-load", name="opening the capsule")
    async def _load(self) -> None:
        if self.path is not None:
            text = await asyncio.to_thread(read_handoff_file, self.path)
            self.saved_text = text
        else:
            text = self._template()
        self.text_area.load_text(text)
        self.text_area.focus()
        self._check_now()

    def _template(self) -> str:
        return "".join(f"# {title}\n\n" for title in SECTIONS)

    # --- live checks ---------------------------------------------------------

    @on(TextArea.Changed, "#capsule-text")
    def _text_changed(self) -> None:
        if self._check_timer is not None:
            self._check_timer.stop()
        self._check_timer = self.set_timer(self.check_delay, self._check_now)

    def _check_now(self) -> None:
        self._check(self.text_area.text)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="capsule-check",
        name="checking the capsule",
    )
    def _check(self, text: str) -> None:
        problems = capsule_problems(self.repo, self.path, text, self.prompt_ceiling)
        report = capsule_report(text, problems, ceiling=self.prompt_ceiling)
        self.post_message(self.Checked(text, report))

    @on(Checked)
    def _show_report(self, event: Checked) -> None:
        self.report = event.report
        self.checked_text = event.text
        self.checks_run += 1
        self.meter.update(meter_text(event.report))
        self.outline.clear_options()
        self.outline.add_options(
            Option(Text(entry.title), id=str(entry.line)) for entry in event.report.outline
        )
        self.problems.clear_options()
        if event.report.problems:
            self.problems.add_options(
                Option(problem_prompt(p), id=f"{i}:{p.line}")
                for i, p in enumerate(event.report.problems)
            )
        else:
            self.problems.add_option(Option(Text("no problems", "green"), disabled=True))

    # --- jumping -------------------------------------------------------------

    def go_to_line(self, line: int) -> None:
        """Put the cursor at the start of 1-based ``line`` and focus the text."""
        row = max(0, min(line - 1, self.text_area.document.line_count - 1))
        self.text_area.move_cursor((row, 0), center=True)
        self.text_area.focus()

    @on(OptionList.OptionSelected, "#capsule-outline")
    def _outline_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.go_to_line(int(event.option.id))

    @on(OptionList.OptionSelected, "#capsule-problems")
    def _problem_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.go_to_line(int(event.option.id.split(":")[1]))

    def action_focus_outline(self) -> None:
        self.outline.focus()

    def action_next_problem(self) -> None:
        row = self.text_area.cursor_location[0] + 1
        lines = [p.line for p in self.report.problems if p.line > 0]
        if not lines:
            self.notify("No problems.")
            return
        following = [line for line in lines if line > row]
        self.go_to_line(following[0] if following else lines[0])

    # --- saving and leaving --------------------------------------------------

    def action_save(self) -> None:
        self.notify("Saving is not wired yet.", severity="warning")

    def action_close(self) -> None:
        if self.focused is not self.text_area:
            self.text_area.focus()
            return
        self.dismiss(self.path if self.saved_text is not None else None)


def describe_error(error: BaseException) -> str:
    """A sentence for a failed action (typed errors carry their own)."""
    return str(error) if isinstance(error, DelegateError) else f"{type(error).__name__}: {error}"
