"""The panel searches while the person types, and shows the names people give sessions."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from tui_support import AppFactory, preview, session_list, settle, started, static_text, wait_until

from core.demo import demo_id


async def test_a_word_half_typed_already_finds_sessions(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press(*"migrat")  # of "Plan the migration from REST polling…"
        await wait_until(
            pilot, lambda: bool(session_list(app).sessions), what="results for a partial word"
        )
        assert all("migration" in s.title.lower() for s in session_list(app).sessions[:5])


async def test_a_name_given_to_a_session_is_its_title_in_the_preview(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await app.orchestrator.rename(demo_id(0), "Payments retry review")
        await pilot.press("f5")
        await settle(pilot)
        await wait_until(
            pilot,
            lambda: (
                "Payments retry review"
                in static_text(preview(app).query_one("#preview-header", Static))
            ),
            what="the name in the preview header",
        )


async def test_a_pasted_id_or_its_first_characters_finds_that_session(
    demo_dir: Path, make_app: AppFactory
) -> None:
    """Ids are not words the full-text search knows; the panel finds them anyway."""
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press(*demo_id(7)[:8])
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in session_list(app).sessions] == [demo_id(7)],
            what="the session the id names",
        )
        await pilot.press("escape", *demo_id(7))
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in session_list(app).sessions] == [demo_id(7)],
            what="the session the whole id names",
        )
