"""The preview reads like a conversation: lines kept, messages numbered, header pinned,
long messages expandable, tool calls quiet, slash commands shown as typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from transcripts import assistant, import_into, text, user, write
from tui_support import AppFactory, preview, screen_text, started, static_text, wait_until

from core.orchestrator import AgentOrchestrator
from tui.app import DelegateApp

SESSION = "bbbbbbbb-0000-4000-8000-000000000001"
LONG = "\n".join(f"row {i}" for i in range(1, 61))


def _conversation() -> list[dict[str, object]]:
    return [
        user(
            SESSION,
            1,
            "<command-name>/model</command-name>\n"
            "<command-message>model</command-message>\n<command-args>sonnet</command-args>",
        ),
        user(SESSION, 2, "first line of the prompt\nsecond line of the prompt"),
        assistant(
            SESSION,
            3,
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls -la"}}],
            used=1_000,
        ),
        user(
            SESSION,
            4,
            [{"type": "tool_result", "tool_use_id": "t1", "content": "total 0\nfile-a\nfile-b"}],
        ),
        assistant(SESSION, 5, [text(LONG)], used=2_000),
        user(SESSION, 6, "thanks"),
    ]


@pytest.fixture
async def conversation_dir(data_dir: Path, tmp_path: Path) -> Path:
    write(tmp_path / "claude", SESSION, _conversation())
    await import_into(data_dir, tmp_path / "claude")
    return data_dir


async def _shown(pilot: Pilot[None]) -> None:
    await started(pilot)
    await wait_until(
        pilot,
        lambda: preview(pilot.app).session is not None,
        what="the preview",
    )


def _messages(app: DelegateApp) -> str:
    return static_text(preview(app).messages, width=100)


async def test_a_slash_command_is_shown_as_the_command(
    conversation_dir: Path, data_dir: Path
) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        page = await orch.recent_messages(SESSION, 10)
    finally:
        await orch.close()
    assert page.messages[-1].content == "/model sonnet"


async def test_single_newlines_are_kept(conversation_dir: Path, make_app: AppFactory) -> None:
    app = make_app(conversation_dir, preview_size=10)
    async with app.run_test(size=(160, 60)) as pilot:
        await _shown(pilot)
        lines = _messages(app).splitlines()
        assert any(line.strip() == "first line of the prompt" for line in lines)
        assert any(line.strip() == "second line of the prompt" for line in lines)


async def test_messages_are_numbered_in_order_not_by_byte_offset(
    conversation_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(conversation_dir, preview_size=4)
    async with app.run_test(size=(160, 60)) as pilot:
        await _shown(pilot)
        shown = _messages(app)
        # Six messages in all; the newest page holds the last four: #3 .. #6.
        for n in (3, 4, 5, 6):
            assert f"#{n} " in shown
        assert "#1 " not in shown
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: "#1 " in _messages(app), what="the older page")
        assert "#2 " in _messages(app)
        assert "#3 " not in _messages(app)


async def test_the_header_stays_in_view_while_the_messages_scroll(
    conversation_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(conversation_dir, preview_size=10)
    async with app.run_test(size=(120, 24)) as pilot:
        await _shown(pilot)
        pane = preview(app)
        assert pane.max_scroll_y > 0  # the page is taller than the pane
        pane.scroll_home(animate=False)
        await pilot.pause()
        assert SESSION in screen_text(app)
        pane.scroll_end(animate=False)
        await pilot.pause()
        assert SESSION in screen_text(app)


async def test_ctrl_o_expands_and_collapses_a_long_message(
    conversation_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(conversation_dir, preview_size=10)
    async with app.run_test(size=(160, 60)) as pilot:
        await _shown(pilot)
        assert "row 50" not in _messages(app)
        assert "more lines" in _messages(app)

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "row 50" in _messages(app), what="expanded")
        assert "row 60" in _messages(app)

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "row 50" not in _messages(app), what="collapsed")


async def test_a_tool_call_and_its_result_are_one_quiet_line_each(
    conversation_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(conversation_dir, preview_size=10)
    async with app.run_test(size=(160, 60)) as pilot:
        await _shown(pilot)
        lines = _messages(app).splitlines()
        call = [line for line in lines if "Bash" in line and "ls -la" in line]
        assert len(call) == 1
        result = [line for line in lines if "total 0" in line]
        assert len(result) == 1
        assert not any(line.strip() == "file-a" for line in lines)  # the output is not spread out
        # Quiet: no role label of their own, just the marker, the tool and a gist.
        for line in (*call, *result):
            assert line.lstrip().startswith("▸")
            assert "assistant" not in line
            assert "tool " not in line


async def test_the_newest_message_stays_in_view_when_the_preview_changes_size(
    conversation_dir: Path, make_app: AppFactory
) -> None:
    """A preview on its newest page follows its end: a smaller box (a narrower terminal,
    the list above growing) still shows the last message, not the middle of the page."""
    app = make_app(conversation_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await _shown(pilot)
        await pilot.pause()
        await pilot.resize_terminal(160, 20)
        await wait_until(
            pilot,
            lambda: preview(app).is_vertical_scroll_end and preview(app).max_scroll_y > 0,
            what="the preview at its end after the resize",
        )
