"""The launch form's context capsule: none, the latest of the branch checked out in the
working directory, or a file inside its repository (checked before the form closes)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import git
import pytest
from editor_support import editor_app, opened, until
from panel_capsule_data import MARKER, git_repo, valid_capsule
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea
from tui_support import (
    AppFactory,
    history_cells,
    preview,
    session_list,
    settle,
    started,
    static_text,
    type_text,
    wait_until,
)

from core.capsules.drift import reference_for
from core.capsules.storage import save_capsule
from core.config import Settings
from core.documents.prompt import CAPSULE_HEADING
from core.models import Role, Session
from tui.app import DelegateApp
from tui.capsules.panel import CAPSULE_FILE, LATEST_CAPSULE, NO_CAPSULE
from tui.modals.confirm_capsule import ConfirmCapsuleLaunch
from tui.modals.new_delegate import LaunchRequest, NewDelegate, agent_choices

CAPSULE = "---\nbranch: feature-billing\n---\n# Goal\n\nShip the export.\n"
CREATED = datetime(2026, 11, 21, 20, 50, tzinfo=UTC)


class FormHost(App[None]):
    """Opens the launch form on ``cwd`` and keeps what it returned."""

    def __init__(self, cwd: Path) -> None:
        super().__init__()
        self.cwd = cwd
        self.returned: list[LaunchRequest | None] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        settings = Settings()
        choices = agent_choices(settings)
        form = NewDelegate(choices, choices[0].agent_id, str(self.cwd))
        self.push_screen(form, self.returned.append)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "billing"
    folder.mkdir()
    repository = git.Repo.init(folder, initial_branch="feature-billing")
    (folder / "README.md").write_text("billing\n")
    repository.index.add(["README.md"])
    repository.index.commit("first")
    return folder


async def _fill(host: FormHost, pilot: object, choice: str, path: str = "") -> NewDelegate:
    await wait_until(pilot, lambda: isinstance(host.screen, NewDelegate), what="the form")  # type: ignore[arg-type]
    form = host.screen
    assert isinstance(form, NewDelegate)
    await type_text(pilot, "Finish the invoice export")  # type: ignore[arg-type]
    form.query_one("#launch-capsule", Select).value = choice
    if path:
        form.query_one("#launch-capsule-path", Input).value = path
    await settle(pilot)  # type: ignore[arg-type]
    return form


async def test_no_capsule_is_the_default(repo: Path) -> None:
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(host.screen, NewDelegate), what="the form")
        assert host.screen.query_one("#launch-capsule", Select).value == "none"
        assert not host.screen.query_one("#launch-capsule-path", Input).display
        await type_text(pilot, "Finish the invoice export")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: host.returned != [], what="the form to close")
        request = host.returned[0]
        assert request is not None
        assert request.capsule is None


async def test_latest_names_the_capsule_it_takes_and_passes_latest(repo: Path) -> None:
    saved = save_capsule(repo, CAPSULE, branch="feature-billing", created=CREATED)
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(host.screen, NewDelegate), what="the form")
        form = host.screen
        await type_text(pilot, "Finish the invoice export")
        # From the keyboard: tab to the choice, open it, the second option.
        form.query_one("#launch-capsule", Select).focus()
        await pilot.press("enter", "down", "enter")
        await settle(pilot)
        assert form.query_one("#launch-capsule", Select).value == "latest"
        note = str(form.query_one("#launch-capsule-note", Static).render())
        assert f"latest on feature-billing: {saved.name}" in note
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: host.returned != [], what="the form to close")
        request = host.returned[0]
        assert request is not None
        assert request.capsule == "latest"


async def test_latest_without_a_capsule_keeps_the_form_open_and_says_why(repo: Path) -> None:
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        form = await _fill(host, pilot, "latest")
        note = str(form.query_one("#launch-capsule-note", Static).render())
        assert "feature-billing has no capsule yet" in note
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert host.screen is form
        assert "capsule_not_found" in str(form.query_one("#launch-error", Static).render())
        assert host.returned == []


async def test_a_file_inside_the_repository_is_passed_resolved(repo: Path) -> None:
    saved = save_capsule(repo, CAPSULE, branch="feature-billing", created=CREATED)
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        form = await _fill(host, pilot, "file", str(saved.relative_to(repo)))
        assert form.query_one("#launch-capsule-path", Input).display
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: host.returned != [], what="the form to close")
        request = host.returned[0]
        assert request is not None
        assert request.capsule == str(saved.resolve())


@pytest.mark.parametrize(
    ("path", "code"),
    [("../outside.md", "capsule_path_unsafe"), ("nowhere.md", "capsule_not_found")],
)
async def test_a_file_outside_the_repository_or_missing_is_refused_in_the_form(
    repo: Path, path: str, code: str
) -> None:
    (repo.parent / "outside.md").write_text(CAPSULE)
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        form = await _fill(host, pilot, "file", path)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert host.screen is form
        assert code in str(form.query_one("#launch-error", Static).render())


async def test_a_file_choice_needs_a_path(repo: Path) -> None:
    host = FormHost(repo)
    async with host.run_test(size=(120, 40)) as pilot:
        form = await _fill(host, pilot, "file")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "Name the capsule file" in str(form.query_one("#launch-error", Static).render())
        assert form.query_one(TextArea).text == "Finish the invoice export"


# --- through the panel: the launch carries the capsule ---------------------------


async def test_a_launch_from_the_panel_carries_the_latest_capsule(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """ctrl+n, a prompt, "the latest of the branch": the echo agent's reply is the prompt
    it received, the capsule's body under its heading; the session records the capsule."""
    repo = git_repo(tmp_path)
    save_capsule(repo, valid_capsule(), branch="feature-billing", created=CREATED)
    app = make_app(data_dir, launch_cwd=repo)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the form")
        await type_text(pilot, "Teach the app to print v2")
        app.screen.query_one("#launch-capsule", Select).value = "latest"
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewDelegate), what="launched")
        await wait_until(
            pilot,
            lambda: any("launched with a capsule" in static_text(c) for c in history_cells(app)),
            what="the capsule cell",
        )
        await wait_until(pilot, lambda: not app.orchestrator.running(), what="the run to end")
        session = await app.orchestrator.get_session(session_list(app).sessions[0].conversation_id)
        assert session.capsule_id
        assert session.capsule_digest
        page = await app.orchestrator.recent_messages(session.conversation_id, 10, None)
        reply = next(m.content for m in page.messages if m.role is Role.ASSISTANT)
        assert reply.index("Teach the app to print v2") < reply.index(CAPSULE_HEADING)
        assert MARKER in reply
        await wait_until(
            pilot,
            lambda: "capsule " + session.capsule_id[:8] in static_text(preview(app).header),
            what="the capsule in the preview header",
        )


async def _launch_stale(app: DelegateApp, pilot: Pilot[None]) -> ConfirmCapsuleLaunch:
    await started(pilot)
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the form")
    await type_text(pilot, "Teach the app to print v2")
    app.screen.query_one("#launch-capsule", Select).value = "latest"
    await settle(pilot)
    await pilot.press("ctrl+s")
    await wait_until(
        pilot, lambda: isinstance(app.screen, ConfirmCapsuleLaunch), what="the question"
    )
    question = app.screen
    assert isinstance(question, ConfirmCapsuleLaunch)
    return question


@pytest.fixture
def stale_repo(tmp_path: Path) -> Path:
    """The latest capsule of the branch references src/app.py as it was before a change."""
    repo = git_repo(tmp_path)
    recorded = reference_for(repo, "src/app.py")
    (repo / "src" / "app.py").write_text("print('v3')\n")
    references = f"references:\n  - path: {recorded.path}\n    blob: {recorded.blob}\n"
    save_capsule(repo, valid_capsule(references), branch="feature-billing", created=CREATED)
    return repo


async def test_a_stale_capsule_asks_first_and_escape_launches_nothing(
    data_dir: Path, stale_repo: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir, launch_cwd=stale_repo)
    async with app.run_test(size=(160, 48)) as pilot:
        question = await _launch_stale(app, pilot)
        assert "is stale" in question.message_text
        assert "src/app.py" in question.message_text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmCapsuleLaunch)
        assert session_list(app).sessions == []


async def test_a_stale_capsule_launches_when_accepted_and_the_cell_says_so(
    data_dir: Path, stale_repo: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir, launch_cwd=stale_repo)
    async with app.run_test(size=(160, 48)) as pilot:
        await _launch_stale(app, pilot)
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: any("accepted: reference_stale" in static_text(c) for c in history_cells(app)),
            what="the launch, the stale reference accepted",
        )
        await wait_until(pilot, lambda: not app.orchestrator.running(), what="the run to end")
        [session] = session_list(app).sessions
        assert (await app.orchestrator.get_session(session.conversation_id)).capsule_id


# --- from the capsule editor (ctrl+l): the form shows and uses what is injected ------

EDITED = "EDITED-CAPSULE-MARK"
OTHER = "OTHER-CAPSULE-MARK"


def _two_capsules(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository with two valid capsules on its branch: the one the editor opens,
    and another one (newer: the branch's latest)."""
    repo = git_repo(tmp_path)
    edited = save_capsule(
        repo, valid_capsule().replace(MARKER, EDITED), branch="feature-billing", created=CREATED
    )
    other = save_capsule(
        repo,
        valid_capsule().replace(MARKER, OTHER),
        branch="feature-billing",
        created=CREATED + timedelta(minutes=5),
    )
    return repo, edited, other


async def _editor_form(pilot: Pilot[Any]) -> NewDelegate:
    await opened(pilot)
    await pilot.press("ctrl+l")
    await until(pilot, lambda: isinstance(pilot.app.screen, NewDelegate), what="the launch form")
    form = pilot.app.screen
    assert isinstance(form, NewDelegate)
    return form


async def _launched_prompt(pilot: Pilot[Any], form: NewDelegate) -> tuple[Session, str]:
    """Launch what the form holds; the session started and the first prompt it received."""
    await type_text(pilot, "carry on")
    await pilot.press("ctrl+s")
    await until(pilot, lambda: pilot.app.screen is not form, what="the form to close")
    orchestrator = pilot.app.orchestrator
    assert orchestrator is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while True:
        sessions = (await orchestrator.list_sessions()).sessions
        if sessions and not orchestrator.running():
            break
        assert loop.time() < deadline, "the launch did not run"
        await pilot.pause(0.05)
    [session] = sessions
    page = await orchestrator.recent_messages(session.conversation_id, 10)
    # The task is stored as dialog, the capsule it carried beside it as context: the
    # first prompt the agent got is both, in order.
    prompt = "\n\n".join(m.content for m in reversed(page.messages) if m.role is Role.USER)
    return session, prompt


async def test_the_editor_launch_form_shows_the_editor_capsule_and_launches_with_it(
    data_dir: Path, tmp_path: Path
) -> None:
    repo, edited, _ = _two_capsules(tmp_path)
    app = editor_app(data_dir, repo, edited)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await _editor_form(pilot)
        assert form.query_one("#launch-capsule", Select).value == CAPSULE_FILE
        path_field = form.query_one("#launch-capsule-path", Input)
        assert path_field.display
        assert Path(path_field.value) == edited
        assert "the capsule being edited" in static_text(form.query_one("#launch-capsule-note"))
        session, prompt = await _launched_prompt(pilot, form)
    assert prompt.index("carry on") < prompt.index(CAPSULE_HEADING)
    assert EDITED in prompt
    assert OTHER not in prompt
    assert session.capsule_id is not None


async def test_a_capsule_picked_in_the_editor_launch_form_is_the_one_injected(
    data_dir: Path, tmp_path: Path
) -> None:
    repo, edited, other = _two_capsules(tmp_path)
    app = editor_app(data_dir, repo, edited)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await _editor_form(pilot)
        form.query_one("#launch-capsule-path", Input).value = str(other.relative_to(repo))
        await settle(pilot)
        session, prompt = await _launched_prompt(pilot, form)
        orchestrator = app.orchestrator
        assert orchestrator is not None
        assert session.capsule_id is not None
        document = await orchestrator.store.documents.get(session.capsule_id)
    assert OTHER in prompt
    assert EDITED not in prompt
    assert Path(document.path) == other


async def test_latest_in_the_editor_launch_form_takes_the_branch_latest(
    data_dir: Path, tmp_path: Path
) -> None:
    repo, edited, _ = _two_capsules(tmp_path)
    app = editor_app(data_dir, repo, edited)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await _editor_form(pilot)
        form.query_one("#launch-capsule", Select).value = LATEST_CAPSULE
        await settle(pilot)
        _, prompt = await _launched_prompt(pilot, form)
    assert OTHER in prompt
    assert EDITED not in prompt


async def test_none_in_the_editor_launch_form_launches_without_a_capsule(
    data_dir: Path, tmp_path: Path
) -> None:
    repo, edited, _ = _two_capsules(tmp_path)
    app = editor_app(data_dir, repo, edited)
    async with app.run_test(size=(120, 40)) as pilot:
        form = await _editor_form(pilot)
        form.query_one("#launch-capsule", Select).value = NO_CAPSULE
        await settle(pilot)
        session, prompt = await _launched_prompt(pilot, form)
    assert CAPSULE_HEADING not in prompt
    assert EDITED not in prompt
    assert session.capsule_id is None
