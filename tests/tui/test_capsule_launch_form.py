"""The launch form's context capsule: none, the latest of the branch checked out in the
working directory, or a file inside its repository (checked before the form closes)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import git
import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Select, Static, TextArea
from tui_support import settle, type_text, wait_until

from core.capsules.storage import save_capsule
from core.config import Settings
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
