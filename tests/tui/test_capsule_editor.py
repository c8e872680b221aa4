"""The capsule editor: live checks as you type, jumping to sections and problems."""

from __future__ import annotations

from pathlib import Path

from editor_support import checked, editor_app, make_repo, opened

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
