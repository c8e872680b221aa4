"""History cells and ``delegate watch`` lines for compact returns: a valid return (its
display line), an invalid one (the rule it broke, why, its size), a chain that ended."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from panel_returns_data import (
    ARTIFACTS,
    PRIMARY,
    conversation_of,
    insert_return_sessions,
)
from tui_support import FIXED_NOW, AppFactory, history_cells, started, static_text, wait_until

from core.events import HISTORY_EVENT, ChainEnded, ReturnAccepted, ReturnRejected
from tui.cli.watch import describe
from tui.widgets.history import ChainEndedCell, ReturnRejectedCell

CELLS = 3


@pytest.fixture
async def returns_dir(data_dir: Path, tmp_path: Path) -> Path:
    await insert_return_sessions(data_dir, tmp_path / "repo", steps=False)
    return data_dir


async def test_each_return_event_has_a_cell_that_says_what_happened(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        accepted, rejected, ended = (static_text(cell, 200) for cell in history_cells(app))
        assert "↩ return · Developer" in accepted
        assert conversation_of(4)[:8] in accepted
        assert (
            "🔨 Group AUTH [Developer] | Implemented JWT authentication | Created 3 files:"
            in " ".join(accepted.split())
        )
        assert "→ QA Expert" in accepted
        assert "✗ return rejected · Developer" in rejected
        assert f"group EXPORT of {ARTIFACTS}" in rejected
        assert "verbose (text around the JSON): 2,140 tokens of text before the JSON" in rejected
        assert "2.1k tokens" in rejected
        assert "✓ chain done" in ended
        assert f"group AUTH of {ARTIFACTS} · 4 steps · BAZINGA · reached the end" in ended
        assert history_cells(app)[1].has_class("-failed")


async def test_a_live_rejection_and_a_chain_stopped_arrive_as_cells(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        bus = app.orchestrator.bus
        bus.publish(
            ReturnRejected(
                at=FIXED_NOW,
                conversation_id=PRIMARY,
                run_id="run-live",
                agent_id="echo",
                artifacts_session=ARTIFACTS,
                group_id="SEARCH",
                role="tech_lead",
                rule="no_handoff",
                reason="handoff_tech_lead.json is missing\n\x1b[2Jsecond line",
                tokens=90,
            )
        )
        bus.publish(
            ChainEnded(
                at=FIXED_NOW,
                conversation_id=PRIMARY,
                artifacts_session=ARTIFACTS,
                group_id="SEARCH",
                steps=3,
                final_status=INVALID,
                reason="invalid",
            )
        )
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS + 2, what="two more")
        rejected, stopped = history_cells(app)[-2:]
        assert isinstance(rejected, ReturnRejectedCell)
        text = static_text(rejected)
        assert "return rejected · TL" in text
        assert "no_handoff (no valid hand-off file): handoff_tech_lead.json is missing" in text
        assert "second line" not in text
        assert "\x1b" not in text
        assert isinstance(stopped, ChainEndedCell)
        assert stopped.has_class("-failed")
        assert "■ chain stopped" in static_text(stopped)
        assert "a return broke the protocol" in static_text(stopped)


INVALID = "INVALID_RETURN"
AT = datetime(2026, 11, 23, tzinfo=UTC)
CONV = "aaaaaaaa-1111"

WATCH_LINES = [
    (
        ReturnAccepted(
            at=AT,
            conversation_id=CONV,
            run_id="r1",
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="AUTH",
            role="qa_expert",
            status="PASS",
            summary=("Tested JWT", "Ran 25 tests", "25/25 passed"),
            next_role="tech_lead",
            display="✅ Group AUTH [QA] | Tested JWT | Ran 25 tests | 25/25 passed → Tech Lead",
        ),
        ["aaaaaaaa", "accepted", "✅ Group AUTH [QA] | Tested JWT", "→ Tech Lead"],
    ),
    (
        # No display line recorded: the same parts, built from the fields.
        ReturnAccepted(
            at=AT,
            conversation_id=CONV,
            run_id="r1",
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="AU\x1bTH",
            role="project_manager",
            status="BAZINGA",
            summary=("Tracked\nAUTH", "1 complete", "BAZINGA"),
            next_role="end",
        ),
        ["🎉 Group AU TH [PM] | Tracked AUTH | 1 complete | BAZINGA → end"],
    ),
    (
        ReturnRejected(
            at=AT,
            conversation_id=CONV,
            run_id="r1",
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="EXPORT",
            role="developer",
            rule="summary_lines",
            reason="two lines, three wanted\nand more",
            tokens=1234,
        ),
        [
            "aaaaaaaa",
            "rejected",
            "Developer",
            "EXPORT",
            "summary_lines (not three summary lines)",
            "two lines, three wanted",
            "1,234 tokens",
        ],
    ),
    (
        ChainEnded(
            at=AT,
            conversation_id=CONV,
            artifacts_session=ARTIFACTS,
            group_id="BILLING",
            steps=12,
            final_status="READY_FOR_QA",
            reason="step_limit",
        ),
        ["BILLING", ARTIFACTS, "12 steps", "READY_FOR_QA", "the step limit was reached"],
    ),
]


@pytest.mark.parametrize(("event", "words"), WATCH_LINES, ids=lambda e: getattr(e, "kind", ""))
def test_each_return_event_reads_as_a_sentence(event: object, words: list[str]) -> None:
    line = describe(HISTORY_EVENT.validate_python(event))
    for word in words:
        assert word in line, line
    assert "\x1b" not in line
    assert "\n" not in line
