"""The capsule editor: a context capsule written from the keyboard, checked as you type.

The text area holds the capsule's Markdown (the template for a new one). Beside it:
the token meter against the body's budget (amber from 80%, red over), the outline
(enter jumps to a section) and the problems list (enter jumps to the line). Checks
run in a worker thread a moment after the last keystroke, never on the event loop;
lines with a secret or a drifted reference are marked in the gutter, and the line
under the text says what is wrong with the cursor's line.

Actions: a transcript highlight from the session's messages (ctrl+t), an inbox
entry into Exploratory Threads (ctrl+b), a reference with its blob id (ctrl+r), the
agent's draft of the section at the cursor or of the whole capsule shown as a diff
(ctrl+g, alt+g), save (ctrl+s), save and launch a new delegate with it (ctrl+l),
save and follow up on the session with it (ctrl+f).

Pushed by the panel for the highlighted session, or run on its own by
``delegate capsule edit [PATH]`` (:mod:`tui.capsules.app`). It dismisses with the path
it last saved (None when nothing was saved).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from core.capsules.drift import reference_for
from core.capsules.model import DEFAULT_PROMPT_CEILING, Reference
from core.clock import Clock, system_clock
from core.documents.problems import Problem
from core.errors import DelegateError
from core.models import Message, MessageCategory, RunStatus, Session
from core.orchestrator import AgentOrchestrator
from tui.capsules import edits
from tui.capsules import files as capsule_files
from tui.capsules.report import CapsuleReport
from tui.modals.capsule_pickers import Choice, PickerModal
from tui.modals.draft_diff import DraftDiffModal
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.new_delegate import LaunchRequest, NewDelegate, agent_choices, default_choice
from tui.shared.safe_text import first_line
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.capsule_text import CapsuleText, Mark

CHECK_DELAY = 0.4
"""Seconds of quiet typing before the checks run again (tests shrink it)."""
HIGHLIGHT_MESSAGES = 100
"""The newest messages the highlight picker offers (one page, the most a page holds)."""
DRAFT_TIMEOUT_S = 600.0
"""How long the editor waits for the agent's draft."""

HIGHLIGHTS = "Transcript Highlights"
THREADS = "Exploratory Threads & User Preferences"
_DRIFT_CODES = ("reference_stale", "reference_missing")


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


def mark_of(problem: Problem) -> Mark:
    if problem.code.startswith("secret_"):
        return "secret"
    if problem.code in _DRIFT_CODES:
        return "drift"
    return "problem"


class CapsuleEditorScreen(ForwardsWorkerErrors, Screen[Path | None]):
    """Edit one capsule of ``repo``: ``path`` (None: a new one from the template),
    written for ``session`` (its source session: branch, references, highlights,
    drafts and follow-ups come from it)."""

    DEFAULT_CSS = """
    CapsuleEditorScreen #capsule-title { height: 1; padding: 0 1; background: $panel; }
    CapsuleEditorScreen #capsule-body { height: 1fr; }
    CapsuleEditorScreen #capsule-side { width: 44; border-right: solid $panel-lighten-1; }
    CapsuleEditorScreen #capsule-meter { height: 1; padding: 0 1; }
    CapsuleEditorScreen .capsule-label { height: 1; padding: 0 1; color: $text-muted; }
    CapsuleEditorScreen #capsule-outline { height: auto; max-height: 10; border: none; }
    CapsuleEditorScreen #capsule-problems { height: 1fr; border: none; }
    CapsuleEditorScreen #capsule-text { width: 1fr; border: none; }
    CapsuleEditorScreen #capsule-status { height: 1; padding: 0 1; color: $text-muted; }
    CapsuleEditorScreen #capsule-status.-secret { color: $error; }
    CapsuleEditorScreen #capsule-status.-warn { color: $warning; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="capsule.save", tooltip="Save the capsule"),
        Binding(
            "ctrl+l",
            "save_and_launch",
            "Launch",
            id="capsule.launch",
            tooltip="Save, then launch a new delegate with the capsule",
        ),
        Binding(
            "ctrl+f",
            "save_and_follow_up",
            "Follow up",
            id="capsule.follow_up",
            tooltip="Save, then follow up on the session with the capsule",
        ),
        Binding(
            "ctrl+t",
            "insert_highlight",
            "Highlight",
            id="capsule.highlight",
            tooltip="Insert a transcript highlight picked from the session's messages",
        ),
        Binding(
            "ctrl+b",
            "pull_inbox",
            "Inbox",
            id="capsule.inbox",
            tooltip="Pull a remember-later entry into Exploratory Threads",
        ),
        Binding(
            "ctrl+r",
            "add_reference",
            "Reference",
            id="capsule.reference",
            tooltip="Reference a file of the repository (its blob id filled in)",
        ),
        Binding(
            "ctrl+g",
            "draft_section",
            "Draft section",
            id="capsule.draft_section",
            tooltip="Ask the agent to draft the section at the cursor",
        ),
        Binding(
            "alt+g",
            "draft_capsule",
            "Draft all",
            id="capsule.draft_capsule",
            tooltip="Ask the agent to draft the whole capsule",
        ),
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

    text_area = getters.query_one("#capsule-text", CapsuleText)
    outline = getters.query_one("#capsule-outline", OptionList)
    problems = getters.query_one("#capsule-problems", OptionList)
    meter = getters.query_one("#capsule-meter", Static)
    status = getters.query_one("#capsule-status", Static)
    title_bar = getters.query_one("#capsule-title", Static)

    class Checked(TextualMessage):
        """A check finished (handled by ``_show_report``)."""

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
        draft_timeout_s: float = DRAFT_TIMEOUT_S,
        source: str | None = None,
    ) -> None:
        super().__init__()
        self.repo = repo
        self.path = path
        self.session = session
        self.source = source  # a source-session marker that names no session of ours
        self.orchestrator = orchestrator
        self.clock = clock
        self.check_delay = check_delay
        self.draft_timeout_s = draft_timeout_s
        settings = orchestrator.settings if orchestrator is not None else None
        self.prompt_ceiling = prompt_ceiling or (
            capsule_files.prompt_ceiling(settings) if settings else DEFAULT_PROMPT_CEILING
        )
        self.report = CapsuleReport()
        self.saved_text: str | None = None  # the text as last read or saved
        self.saved_path: Path | None = None  # where this editor last saved
        self.checked_text: str | None = None  # the text the shown report is about
        self.checks_run = 0
        self._check_timer: Timer | None = None
        self._warned_text: str | None = None  # the text a "leave unsaved?" warning was for
        self._consumed_entries: list[str] = []  # inbox entries pulled in, until saved

    # --- layout --------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="capsule-title")
        with Horizontal(id="capsule-body"):
            with Vertical(id="capsule-side"):
                yield Static(meter_text(self.report), id="capsule-meter")
                yield Static("Outline · ctrl+o", classes="capsule-label")
                yield OptionList(id="capsule-outline")
                yield Static("Problems · f8", classes="capsule-label")
                yield OptionList(id="capsule-problems")
            yield CapsuleText(id="capsule-text")
        yield Static("", id="capsule-status")
        yield Footer()

    def _title(self) -> Text:
        text = Text("capsule  ", "bold")
        if self.path is None:
            text.append("new, not saved yet")
        else:
            text.append(str(self._shown_path(self.path)))
            if self.saved_text is not None and self.text_area.text != self.saved_text:
                text.append("  (modified)", "yellow")
        if self.session:
            text.append(f"  · session {self.session[:8]}", "dim")
        return text

    def _shown_path(self, path: Path) -> Path:
        try:
            return path.relative_to(self.repo)
        except ValueError:
            return path

    def on_mount(self) -> None:
        self._load()

    @work(exit_on_error=False, group="capsule-load", name="opening the capsule")
    async def _load(self) -> None:
        if self.path is not None:
            text = await asyncio.to_thread(capsule_files.read_capsule, self.path)
            self.saved_text = text
        else:
            session = await self._session()
            text = await asyncio.to_thread(
                capsule_files.new_capsule_text, self.repo, session, self.clock(), self.source
            )
        self.text_area.load_text(text)
        self.text_area.focus()
        self._check_now()

    async def _session(self) -> Session | None:
        if self.session is None or self.orchestrator is None:
            return None
        return await self.orchestrator.get_session(self.session)

    # --- live checks ---------------------------------------------------------

    @on(CapsuleText.Changed, "#capsule-text")
    def _text_changed(self) -> None:
        if self._check_timer is not None:
            self._check_timer.stop()
        self._check_timer = self.set_timer(self.check_delay, self._check_now)
        self.title_bar.update(self._title())

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
        report = capsule_files.check(self.repo, self.path, text, self.prompt_ceiling)
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
        marks: dict[int, list[Mark]] = {}
        for problem in event.report.problems:
            if problem.line > 0:
                marks.setdefault(problem.line - 1, []).append(mark_of(problem))
        self.text_area.set_marks(marks)
        self._show_line_problems()

    @on(CapsuleText.SelectionChanged, "#capsule-text")
    def _show_line_problems(self) -> None:
        """The line under the text: what is wrong with the cursor's line, if anything."""
        line = self.text_area.cursor_location[0] + 1
        here = [p for p in self.report.problems if p.line == line]
        self.status.set_class(any(mark_of(p) == "secret" for p in here), "-secret")
        self.status.set_class(bool(here) and not self.status.has_class("-secret"), "-warn")
        if here:
            self.status.update(Text(f"line {line}: " + " · ".join(p.message for p in here)))
        else:
            self.status.update(Text(f"line {line}"))

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

    # --- editing -------------------------------------------------------------

    def replace_text(self, text: str, row: int | None = None) -> None:
        """Swap the whole text for ``text`` as one undoable edit; cursor to ``row``."""
        document = self.text_area.document
        self.text_area.replace(text, (0, 0), document.end)
        if row is not None:
            self.go_to_line(row + 1)

    def _add_to(self, title: str, entry: str) -> None:
        text, row = edits.add_to_section(self.text_area.text, title, entry)
        self.replace_text(text, row)

    def _needs_session(self, what: str) -> str | None:
        if self.session is None or self.orchestrator is None:
            self.notify(
                f"{what} needs the capsule's session: open the editor from the panel "
                "on a session, or give `--session`.",
                severity="warning",
            )
            return None
        return self.session

    def _asking(self) -> tuple[AgentOrchestrator, str]:
        """The orchestrator and session an action checked with ``_needs_session``."""
        if self.orchestrator is None or self.session is None:
            raise RuntimeError("an action that needs the session ran without one")
        return self.orchestrator, self.session

    def action_insert_highlight(self) -> None:
        if self._needs_session("A transcript highlight") is not None:
            self._pick_highlight()

    @work(exit_on_error=False, group="capsule-action", name="listing the session's messages")
    async def _pick_highlight(self) -> None:
        orchestrator, session = self._asking()
        page = await orchestrator.recent_messages(session, HIGHLIGHT_MESSAGES)
        said = [
            m
            for m in page.messages
            if m.category is MessageCategory.DIALOG
            and m.role in ("user", "assistant")
            and m.content.strip()
        ]
        choices = [
            Choice(
                f"{m.role}: {' '.join(m.content.split())}",
                m,
                f"{m.created_at:%Y-%m-%d %H:%M}",
            )
            for m in said
        ]
        picked: Message | None = await self.app.push_screen_wait(
            PickerModal("Transcript highlight", choices, empty="No messages in this session.")
        )
        if picked is not None:
            self._add_to(HIGHLIGHTS, edits.highlight_line(picked))

    def action_pull_inbox(self) -> None:
        self._pick_inbox_entry()

    @work(exit_on_error=False, group="capsule-action", name="reading the inbox")
    async def _pick_inbox_entry(self) -> None:
        entries = await asyncio.to_thread(capsule_files.open_inbox_entries, self.repo)
        choices = [Choice(entry.label, entry, entry.detail) for entry in entries]
        picked = await self.app.push_screen_wait(
            PickerModal("Remember-later inbox", choices, empty="The inbox is empty.")
        )
        if picked is None:
            return
        self._add_to(THREADS, picked.bullet)
        self._consumed_entries.append(picked.entry_id)

    def action_add_reference(self) -> None:
        self._pick_reference()

    @work(exit_on_error=False, group="capsule-action", name="listing the repository's files")
    async def _pick_reference(self) -> None:
        files = await asyncio.to_thread(capsule_files.repository_files, self.repo)
        picked: str | None = await self.app.push_screen_wait(
            PickerModal(
                "Reference a file",
                [Choice(name, name) for name in files],
                empty="No files in this repository.",
            )
        )
        if picked is None:
            return
        reference: Reference = await asyncio.to_thread(reference_for, self.repo, picked)
        text, row = capsule_files.with_reference(self.text_area.text, reference)
        self.replace_text(text, row)

    # --- asking the agent ----------------------------------------------------

    def action_draft_section(self) -> None:
        title = edits.section_at(self.text_area.text, self.text_area.cursor_location[0])
        if title is None:
            self.action_draft_capsule()
        elif self._needs_session("A draft from the agent") is not None:
            self._draft(title)

    def action_draft_capsule(self) -> None:
        if self._needs_session("A draft from the agent") is not None:
            self._draft(None)

    @work(exit_on_error=False, exclusive=True, group="capsule-draft", name="asking the agent")
    async def _draft(self, title: str | None) -> None:
        orchestrator, session = self._asking()
        before = self.text_area.text
        prompt = (
            edits.capsule_request(before) if title is None else edits.section_request(before, title)
        )
        what = "the whole capsule" if title is None else f"“{title}”"
        self.notify(f"Asked the agent to draft {what}…", markup=False)
        [handle] = await orchestrator.delegate(prompt, conversation_id=session)
        try:
            run = await asyncio.wait_for(handle.wait(), self.draft_timeout_s)
        except TimeoutError:
            handle.cancel()
            self.notify("The agent took too long; the capsule is unchanged.", severity="warning")
            return
        if run.status is not RunStatus.COMPLETED:
            self.notify(f"The agent's run ended {run.status}; no draft.", severity="warning")
            return
        reply = run.output or ""
        if title is None:
            draft = edits.drafted_capsule(reply)
            after = draft
        else:
            section = edits.drafted_section(reply, title)
            after = edits.replace_section(before, title, section) if section else None
        if after is None:
            self.notify(
                "The agent's reply holds no capsule Markdown to use; the capsule is unchanged.",
                severity="warning",
            )
            return
        accepted = await self.app.push_screen_wait(DraftDiffModal(what, before, after))
        if accepted and self.text_area.text == before:
            self.replace_text(after)
        elif accepted:
            self.notify("The text changed while the agent drafted; the draft was not applied.")

    # --- saving and launching ------------------------------------------------

    def action_save(self) -> None:
        self._save_then(None)

    def action_save_and_launch(self) -> None:
        self._save_then(self._launch)

    def action_save_and_follow_up(self) -> None:
        if self._needs_session("A follow-up") is not None:
            self._save_then(self._follow_up)

    @work(exit_on_error=False, exclusive=True, group="capsule-save", name="saving the capsule")
    async def _save_then(self, then: Callable[[Path], object] | None) -> None:
        text = self.text_area.text
        saved = await capsule_files.save(
            self.orchestrator,
            self.repo,
            self.path,
            text,
            session=self.session,
            now=self.clock(),
            consumed=tuple(self._consumed_entries),
        )
        self._consumed_entries.clear()
        self.path, self.saved_text, self.saved_path = saved, text, saved
        self.title_bar.update(self._title())
        self.notify(f"Saved {self._shown_path(saved)}", markup=False)
        if then is not None:
            then(saved)

    def _launch(self, path: Path) -> None:
        orchestrator = self.orchestrator
        if orchestrator is None:
            return
        choices = agent_choices(orchestrator.settings)
        # The form starts with the capsule just saved: what it shows is what is injected,
        # and another choice there (another file, latest, none) replaces it.
        form = NewDelegate(
            choices,
            default_choice(orchestrator.settings, choices),
            str(self.repo),
            capsule=path,
        )

        async def launch(request: LaunchRequest | None) -> None:
            if request is None:
                return
            try:
                [handle] = await orchestrator.delegate(
                    request.prompt, request.agent_id, cwd=request.cwd, capsule=request.capsule
                )
            except DelegateError as exc:
                self.notify(exc.message, title="Not launched", severity="error", markup=False)
                return
            carried = "without a capsule" if request.capsule is None else "with the capsule"
            self.notify(f"Launched {handle.conversation_id[:8]} {carried}", markup=False)

        self.app.push_screen(form, launch)

    def _follow_up(self, path: Path) -> None:
        """The follow-up box for the session, its prompt starting with the capsule block
        (a follow-up's prompt is the person's: the capsule goes in as text they see)."""
        orchestrator, session_id = self._asking()
        draft = edits.follow_up_draft(self.text_area.text, self._shown_path(path))

        async def send(prompt: str) -> None:
            await orchestrator.delegate(prompt, conversation_id=session_id)

        async def ask() -> None:
            session = await orchestrator.get_session(session_id)
            await self.app.push_screen(FollowUpPrompt(session, draft, send=send))

        self.run_worker(ask(), exit_on_error=False, name="opening the follow-up")

    @property
    def modified(self) -> bool:
        """Whether the text differs from what was opened or saved last (a new capsule
        counts as modified until saved)."""
        return self.text_area.text != self.saved_text

    def action_close(self) -> None:
        """From a list: back to the text. From the text: leave; with unsaved changes,
        only when asked twice in a row (nothing typed is lost to one stray escape)."""
        if self.focused is not self.text_area:
            self.text_area.focus()
            return
        if self.modified and self._warned_text != self.text_area.text:
            self._warned_text = self.text_area.text
            self.notify(
                "The capsule has unsaved changes: ctrl+s saves them, escape again leaves "
                "without saving.",
                severity="warning",
            )
            return
        self.dismiss(self.saved_path)
