"""The launch form opened on a session offers a capsule (seed 000's launcher): a launch
may be a sub-agent of that session, its capsule requested from it, and when the parent
holds context worth carrying while no capsule is chosen, the form says how to carry it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import git
import pytest
from panel_capsule_data import MARKER, git_repo, valid_capsule
from textual.app import App, ComposeResult
from textual.widgets import Select, Static
from tui_support import AppFactory, session_list, settle, started, type_text, wait_until

from core.capsules.storage import save_capsule
from core.config import Settings
from core.orchestrator import AgentOrchestrator
from tui.modals.new_delegate import (
    REQUEST_CAPSULE,
    LaunchRequest,
    NewDelegate,
    ParentOffer,
    agent_choices,
)

CAPSULE = "---\nbranch: feature-billing\n---\n# Goal\n\nShip the export.\n"
CREATED = datetime(2026, 11, 21, 20, 50, tzinfo=UTC)
PARENT = ParentOffer(
    "1a2b3c4d-0000-4000-8000-000000000001",
    "1a2b3c4d",
    "Plan the invoice export",
    "7 turns and 42,000 tokens of context",
)


class FormHost(App[None]):
    def __init__(self, cwd: Path, parent: ParentOffer | None) -> None:
        super().__init__()
        self.cwd, self.offered = cwd, parent
        self.returned: list[LaunchRequest | None] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        choices = agent_choices(Settings())
        form = NewDelegate(choices, choices[0].agent_id, str(self.cwd), self.offered)
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


async def _form(host: FormHost, pilot: object) -> NewDelegate:
    await wait_until(pilot, lambda: isinstance(host.screen, NewDelegate), what="the form")  # type: ignore[arg-type]
    assert isinstance(host.screen, NewDelegate)
    await type_text(pilot, "Write the export's tests")  # type: ignore[arg-type]
    return host.screen


def _note(form: NewDelegate) -> str:
    return str(form.query_one("#launch-capsule-note", Static).render())


async def test_a_sub_agent_of_a_parent_with_context_is_offered_a_capsule(repo: Path) -> None:
    saved = save_capsule(repo, CAPSULE, branch="feature-billing", created=CREATED)
    host = FormHost(repo, PARENT)
    async with host.run_test(size=(120, 44)) as pilot:
        form = await _form(host, pilot)
        assert _note(form) == ""  # a session of its own: nothing to offer
        form.query_one("#launch-parent", Select).value = PARENT.conversation_id
        await settle(pilot)
        note = _note(form)
        assert "1a2b3c4d holds 7 turns and 42,000 tokens of context" in note
        assert f"take the latest of the branch ({saved.name})" in note
        assert "request one from 1a2b3c4d" in note
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: host.returned != [], what="the form to close")
        [request] = host.returned
        assert request is not None
        assert (request.parent_id, request.capsule, request.request_capsule) == (
            PARENT.conversation_id,
            None,
            False,
        )


async def test_requesting_the_parents_capsule_needs_the_parent(repo: Path) -> None:
    host = FormHost(repo, PARENT)
    async with host.run_test(size=(120, 44)) as pilot:
        form = await _form(host, pilot)
        form.query_one("#launch-capsule", Select).value = REQUEST_CAPSULE
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert host.screen is form
        error = str(form.query_one("#launch-error", Static).render())
        assert "Choose the parent" in error
        form.query_one("#launch-parent", Select).value = PARENT.conversation_id
        await settle(pilot)
        assert "asked for its capsule first" in _note(form)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: host.returned != [], what="the form to close")
        [request] = host.returned
        assert request is not None
        assert (request.parent_id, request.request_capsule) == (PARENT.conversation_id, True)


async def test_a_parent_with_little_context_gets_no_offer(repo: Path) -> None:
    thin = ParentOffer(PARENT.conversation_id, PARENT.short_id, PARENT.title, "")
    host = FormHost(repo, thin)
    async with host.run_test(size=(120, 44)) as pilot:
        form = await _form(host, pilot)
        form.query_one("#launch-parent", Select).value = PARENT.conversation_id
        await settle(pilot)
        assert _note(form) == ""


async def test_without_a_highlighted_session_the_form_has_no_parent_field(repo: Path) -> None:
    host = FormHost(repo, None)
    async with host.run_test(size=(120, 44)) as pilot:
        form = await _form(host, pilot)
        assert not form.query("#launch-parent")
        options = form.query_one("#launch-capsule", Select)._options
        assert REQUEST_CAPSULE not in [value for _label, value in options]


# --- through the panel: the sub-agent carries the capsule its parent wrote -----------


async def test_the_panel_requests_the_parents_capsule_and_launches_the_sub_agent_with_it(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    repo = git_repo(tmp_path)
    script = data_dir / "capsuler.toml"
    script.write_text(
        f"[[rules]]\nmatch = '(?i)capsule'\nreply = '''{valid_capsule()}'''\n"
        "[[rules]]\nmatch = '.'\nreply = 'planned'\n",
        encoding="utf-8",
    )
    with (data_dir / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[agents.capsuler]\nrunner = "scripted"\nscript = "{script}"\n')
    orch = await AgentOrchestrator.open(data_dir)
    try:
        [planned] = await orch.delegate("plan the work", agent_id="capsuler", cwd=str(repo))
        await planned.wait()
    finally:
        await orch.close()
    parent = planned.conversation_id

    app = make_app(data_dir, launch_cwd=repo)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the form")
        await type_text(pilot, "Write the tests")
        app.screen.query_one("#launch-parent", Select).value = parent
        app.screen.query_one("#launch-agent", Select).value = "echo"
        app.screen.query_one("#launch-capsule", Select).value = REQUEST_CAPSULE
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 2, what="the child")
        await wait_until(pilot, lambda: not app.orchestrator.running(), what="the runs to end")
        [child] = [s for s in session_list(app).sessions if s.conversation_id != parent]
        child = await app.orchestrator.get_session(child.conversation_id)
        assert child.parent_id == parent
        assert child.capsule_id is not None
        document = await app.orchestrator.store.documents.get(child.capsule_id)
        assert document.source_session == parent  # the draft the parent wrote
        page = await app.orchestrator.recent_messages(child.conversation_id, 10, None)
        assert any(MARKER in m.content for m in page.messages)
