"""The panel finds a session by an id it had before its agent re-keyed it (the id a
Codex launch printed), pasted whole or by its first characters."""

from __future__ import annotations

from pathlib import Path

from tui_support import AppFactory, session_list, started, wait_until

from core.demo import demo_id

THREAD = "019d0000-0000-7000-8000-00000000a11a"


async def test_a_pasted_old_id_finds_the_session_under_its_new_id(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        printed = demo_id(7)
        await app.orchestrator.store.sessions.rekey(printed, THREAD)
        await pilot.press(*printed)
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in session_list(app).sessions] == [THREAD],
            what="the session the old id names",
        )
        await pilot.press("escape", *printed[:8])
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in session_list(app).sessions] == [THREAD],
            what="the session the old id's first characters name",
        )
