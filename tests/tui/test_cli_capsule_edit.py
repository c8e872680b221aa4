"""``delegate capsule edit PATH``: the editor opens on the file, over the command's store."""

from __future__ import annotations

from pathlib import Path

from editor_support import FAST_CHECKS, make_repo, opened
from tui_support import fixed_clock

from core.capsules.model import FrontMatter
from core.capsules.storage import save_capsule
from core.capsules.template import capsule_template
from core.orchestrator import AgentOrchestrator
from tui.cli.capsule import editor_over


async def test_edit_opens_the_named_capsule(data_dir: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    front = FrontMatter(
        branch="feature/capsules",
        source_session="s-1",
        created_at=fixed_clock(),
        primary_objective="Carry the work over",
        template="mini",
    )
    text = capsule_template(front)
    path = save_capsule(repo, text, branch="feature/capsules", created=fixed_clock())
    orch = await AgentOrchestrator.open(data_dir)
    try:
        app = editor_over(
            orch, repo, path, None, clock=fixed_clock, check_delay=FAST_CHECKS, cursor_blink=False
        )
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await opened(pilot)
            assert screen.text_area.text == text
    finally:
        await orch.close()


async def test_edit_with_a_free_marker_names_it_as_the_source_session(
    data_dir: Path, tmp_path: Path
) -> None:
    from tui.cli.capsule import source_of

    repo = make_repo(tmp_path / "repo")
    orch = await AgentOrchestrator.open(data_dir)
    try:
        marker, session = await source_of(orch, "20251023-171812-bc1df3")
        assert (marker, session) == ("20251023-171812-bc1df3", None)
        app = editor_over(
            orch,
            repo,
            None,
            session,
            source=marker,
            clock=fixed_clock,
            check_delay=FAST_CHECKS,
            cursor_blink=False,
        )
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await opened(pilot)
            assert "\nsource_session: 20251023-171812-bc1df3\n" in screen.text_area.text
    finally:
        await orch.close()
