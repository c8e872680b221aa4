"""The capsule editor: live checks as you type, jumping to sections and problems."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from editor_support import (
    DRAFTED_SNAPSHOT,
    SESSION,
    checked,
    drafter_config,
    editor_app,
    insert_session,
    make_repo,
    opened,
    until,
)
from textual.widgets import TextArea
from tui_support import FIXED_NOW, type_text, wait_until

from core.capsules.drift import blob_id
from core.capsules.inbox import inbox_entries, remember
from core.capsules.markdown import parse_capsule
from core.capsules.model import SECTIONS, FrontMatter
from core.capsules.registry import capsule_document
from core.capsules.storage import save_capsule
from core.capsules.template import capsule_template
from tui.modals.capsule_pickers import PickerModal
from tui.modals.draft_diff import DraftDiffModal, diff_text
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.new_delegate import NewDelegate

SECRET_LINE = "- deploy key: ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


async def test_problems_follow_typing_and_jump_to_their_line(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        assert not [p for p in screen.report.problems if p.code.startswith("secret_")]
        knowledge = next(e for e in screen.report.outline if e.title == "Knowledge Base")
        screen.go_to_line(knowledge.line + 1)
        screen.text_area.insert(SECRET_LINE + "\n")
        screen = await checked(pilot)
        secrets = [p for p in screen.report.problems if p.code.startswith("secret_")]
        assert [p.line for p in secrets] == [knowledge.line + 1]
        # The problems list jumps to the line: the cursor goes there from elsewhere.
        screen.go_to_line(1)
        screen.problems.focus()
        index = screen.report.problems.index(secrets[0])
        screen.problems.highlighted = index
        await pilot.press("enter")
        assert screen.text_area.cursor_location == (knowledge.line, 0)
        assert screen.focused is screen.text_area


async def test_outline_jumps_to_a_section(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        titles = [e.title for e in screen.report.outline]
        assert "Pending Actions" in titles
        await pilot.press("ctrl+o")
        assert screen.focused is screen.outline
        screen.outline.highlighted = titles.index("Pending Actions")
        await pilot.press("enter")
        line = screen.report.outline[titles.index("Pending Actions")].line
        assert screen.text_area.cursor_location == (line - 1, 0)
        assert screen.text_area.document.get_line(line - 1) == "# Pending Actions"


async def test_checks_run_off_the_event_loop_after_typing_pauses(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo, check_delay=0.3)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        before = screen.checks_run
        for ch in "abcdef":
            await pilot.press(ch)
        await checked(pilot)
        # Six keystrokes inside the quiet period: one check, not six.
        assert screen.checks_run == before + 1


async def test_a_new_capsule_is_the_template_prefilled_from_the_session(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "print(1)\n"})
    (repo / "app.py").write_text("print(2)\n")  # the session's work: a changed file
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        capsule = parse_capsule(screen.text_area.text)
        assert capsule.front.source_session == SESSION
        assert capsule.front.branch == "feature/capsules"
        assert capsule.front.primary_objective == "Capsule editor"
        [reference] = capsule.front.references
        assert reference.path == "app.py"
        assert reference.blob == blob_id(b"print(2)\n")
        assert [e.title for e in screen.report.outline] == list(SECTIONS)


async def test_delegates_own_files_are_never_prefilled_as_references(
    data_dir: Path, tmp_path: Path
) -> None:
    """Earlier capsules, hand-offs and the inbox live under ``.delegate/``: they are
    delegate's records, not the work a sub-agent relies on."""
    repo = make_repo(tmp_path / "repo", {"app.py": "print(1)\n"})
    (repo / "app.py").write_text("print(2)\n")
    for name in ("capsules/feature/capsules/20261122T090000Z.md", "handoffs/h.md"):
        record = repo / ".delegate" / name
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("# an earlier record\n")
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        references = parse_capsule(screen.text_area.text).front.references
        assert [r.path for r in references] == ["app.py"]


async def test_insert_a_highlight_picked_from_the_session(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: isinstance(app.screen, PickerModal), what="the picker")
        await type_text(pilot, "worker thread")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="the editor again")
        screen = await checked(pilot)
        capsule = parse_capsule(screen.text_area.text)
        highlights = capsule.section("Transcript Highlights")
        assert highlights is not None
        assert "Decided: checks run in a worker thread" in highlights.body
        assert f"(message {SESSION[:8]})" in highlights.body
        # The reference filled in: validation finds nothing to say about the highlight.
        assert not [p for p in screen.report.problems if p.code.startswith("highlight")]
        row = screen.text_area.cursor_location[0]
        assert "worker thread" in screen.text_area.document.get_line(row)


async def test_pull_an_inbox_entry_into_exploratory_threads(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    entry = remember(
        repo,
        "Try a diff view for drafts",
        topic="ux",
        next_step="sketch it",
        tags=("editor",),
        now=FIXED_NOW,
    )
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, PickerModal), what="the picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="the editor again")
        threads = parse_capsule(screen.text_area.text).section(
            "Exploratory Threads & User Preferences"
        )
        assert threads is not None
        assert "**ux**: Try a diff view for drafts — next step: sketch it" in threads.body
        # Pulled is not consumed until the capsule is saved; then it is, into that file.
        assert [e.entry_id for e in inbox_entries(repo)] == [entry.entry_id]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.saved_text is not None, seconds=30, what="the save")
        assert inbox_entries(repo) == []
        [consumed] = inbox_entries(repo, include_consumed=True)
        assert screen.path is not None
        assert consumed.consumed_into == screen.path.relative_to(repo).as_posix()


async def test_add_a_reference_with_its_blob_id(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"docs/plan.md": "plan\n", "src/core.py": "x = 1\n"})
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, PickerModal), what="the picker")
        await type_text(pilot, "core")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="the editor again")
        await wait_until(
            pilot,
            lambda: bool(parse_capsule(screen.text_area.text).front.references),
            what="the reference",
        )
        [reference] = parse_capsule(screen.text_area.text).front.references
        assert reference.path == "src/core.py"
        assert reference.blob == blob_id(b"x = 1\n")
        # Drift marks: the file changes, the reference's line gets a mark.
        (repo / "src" / "core.py").write_text("x = 2\n")
        screen.text_area.insert(" ")  # any edit runs the checks again
        screen = await checked(pilot)
        drift = [p for p in screen.report.problems if p.code == "reference_stale"]
        assert drift
        assert screen.text_area.marks.get(drift[0].line - 1) == "drift"


async def test_secret_warning_on_the_line_itself(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        knowledge = next(e for e in screen.report.outline if e.title == "Knowledge Base")
        screen.go_to_line(knowledge.line + 1)
        screen.text_area.insert(SECRET_LINE + "\n")
        screen = await checked(pilot)
        assert screen.text_area.marks.get(knowledge.line) == "secret"
        screen.go_to_line(knowledge.line + 1)
        await pilot.pause()
        assert "secret" in str(screen.status.render()).lower() or screen.status.has_class("-secret")
        assert screen.status.has_class("-secret")


async def test_agent_drafts_a_section_shown_as_a_diff_to_accept(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        mission = next(e for e in screen.report.outline if e.title == "Mission Snapshot")
        screen.go_to_line(mission.line + 1)
        before = screen.text_area.text
        await pilot.press("ctrl+g")
        await until(
            pilot, lambda: isinstance(app.screen, DraftDiffModal), seconds=20, what="the diff"
        )
        diff = app.screen
        assert isinstance(diff, DraftDiffModal)
        assert f"+{DRAFTED_SNAPSHOT}" in diff_text(diff.before, diff.after).plain
        assert screen.text_area.text == before  # nothing changes until accepted
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: app.screen is screen, what="the editor again")
        snapshot = parse_capsule(screen.text_area.text).section("Mission Snapshot")
        assert snapshot is not None
        assert DRAFTED_SNAPSHOT in snapshot.body
        # The other sections are as they were.
        assert screen.text_area.text.endswith(before.split("# Key Decisions", 1)[1])


async def test_agent_draft_rejected_leaves_the_text(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        mission = next(e for e in screen.report.outline if e.title == "Mission Snapshot")
        screen.go_to_line(mission.line + 1)
        before = screen.text_area.text
        await pilot.press("ctrl+g")
        await until(
            pilot, lambda: isinstance(app.screen, DraftDiffModal), seconds=20, what="the diff"
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, what="the editor again")
        assert screen.text_area.text == before


async def test_save_writes_registers_and_announces(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: screen.saved_text is not None, seconds=30, what="the save")
        path = screen.path
        assert path is not None
        assert path.parent == repo / ".delegate" / "capsules" / "feature" / "capsules"
        assert path.read_text() == screen.text_area.text
        orchestrator = app.orchestrator
        assert orchestrator is not None
        document = await capsule_document(orchestrator.store, path)
        assert document is not None
        assert document.producer == "person"
        events = await orchestrator.history(10)
        assert any(e.kind == "capsule_saved" for e in events)
        # Saving again rewrites the same file, not a new one.
        screen.text_area.insert("more\n", (screen.text_area.document.line_count - 1, 0))
        await pilot.press("ctrl+s")
        await wait_until(
            pilot, lambda: path.read_text() == screen.text_area.text, what="the second save"
        )
        assert list(path.parent.iterdir()) == [path]


async def test_edit_an_existing_capsule_and_leave_with_its_path(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    text = capsule_template(
        FrontMatter(
            branch="feature/capsules",
            source_session="s1",
            created_at=FIXED_NOW,
            primary_objective="x",
        )
    )
    path = save_capsule(repo, text, branch="feature/capsules", created=FIXED_NOW)
    app = editor_app(data_dir, repo, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        assert screen.text_area.text == text
        await pilot.press("escape")
    assert app.return_value is None  # left without saving
    app = editor_app(data_dir, repo, path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        screen.text_area.insert("- **User intent:** edit in place\n", (9, 0))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.saved_path is not None, seconds=30, what="the save")
        await pilot.press("escape")
    assert app.return_value == path
    assert "edit in place" in path.read_text()


async def test_save_and_launch_a_delegate_carrying_the_capsule(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        mission = next(e for e in screen.report.outline if e.title == "Mission Snapshot")
        screen.go_to_line(mission.line + 1)
        screen.text_area.insert("- **User intent:** launch from the editor\n")
        text = re.sub(
            r"(?m)^primary_objective:.*$",
            'primary_objective: "launch from the editor"',
            screen.text_area.text,
        )
        screen.replace_text(text)
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the launch form")
        await type_text(pilot, "carry on")
        await pilot.press("ctrl+s")
        orchestrator = app.orchestrator
        assert orchestrator is not None
        await until(pilot, lambda: app.screen is screen, what="the editor again")

        async def launched() -> list[str]:
            return [e.kind for e in await orchestrator.history(20)]

        deadline = asyncio.get_running_loop().time() + 20
        while "capsule_injected" not in await launched():
            assert asyncio.get_running_loop().time() < deadline, await launched()
            await pilot.pause(0.05)
        assert screen.path is not None
        [session] = (await orchestrator.list_sessions()).sessions
        assert session.capsule_id is not None
        # The agent got the task, then the capsule; the session keeps the capsule as context.
        run = await orchestrator.latest_run(session.conversation_id)
        assert run is not None
        prompt = run.prompt
        assert prompt.index("carry on") < prompt.index("## Context Capsule")
        assert "launch from the editor" in prompt
        page = await orchestrator.recent_messages(session.conversation_id, 10)
        [carried] = [m for m in page.messages if m.category == "context"]
        assert "launch from the editor" in carried.content


async def test_save_and_follow_up_on_the_session_with_the_capsule(
    data_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    drafter_config(data_dir)
    await insert_session(data_dir, repo)
    app = editor_app(data_dir, repo, session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, FollowUpPrompt), what="the box")
        box = app.screen
        draft = box.query_one(TextArea).text
        assert "## Context Capsule" in draft
        assert "# Mission Snapshot" in draft
        assert screen.path is not None
        assert screen.path.exists()


async def test_escape_with_unsaved_changes_asks_twice(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("escape")
        # A new capsule never saved: the first escape warns, the editor stays.
        assert app.screen is screen
        await pilot.press("escape")
        await until(pilot, lambda: app.return_code is not None, what="the app to end")
    assert app.return_value is None


async def test_the_editor_keys_follow_the_keymap(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = data_dir / "config.toml"
    config.write_text('[keymap]\n"capsule.save" = "f2"\n' + config.read_text())
    app = editor_app(data_dir, repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await pilot.press("f2")
        await until(pilot, lambda: screen.saved_path is not None, what="the save on f2")
