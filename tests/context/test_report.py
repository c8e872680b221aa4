"""``context_report``: a session's figures, window, trend, breakdown, crossings and chain.

Driven through the orchestrator with a scripted agent that reports high usage,
on a real store; what other parts write (chains, checkpoints, hand-offs) is put
in the store directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import BASE_US, query, write_config

from core.config import DB_FILENAME
from core.errors import UnknownConversation
from core.models import ContextLevel, DocumentKind, MessageCategory, WindowSource
from core.orchestrator import AgentOrchestrator
from core.store import NewDocument, Store

SCRIPT = """
[[rules]]
match = "(?i)first"
reply = "ok"
context_tokens = 20000

[[rules]]
match = "(?i)second"
reply = "ok"
context_tokens = 50000

[[rules]]
match = "(?i)third"
reply = "ok"
context_tokens = 80000
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    script = tmp_path / "usage.toml"
    script.write_text(SCRIPT, encoding="utf-8")
    return write_config(
        tmp_path / "data",
        f'\n[agents.heavy]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 100000\n',
    )


async def _run(orch: AgentOrchestrator, prompt: str, cid: str | None = None) -> str:
    [handle] = await orch.delegate(prompt=prompt, agent_id="heavy", conversation_id=cid)
    run = await handle.wait()
    return run.conversation_id


async def test_every_run_close_keeps_a_sample_and_the_rate_per_turn(
    orch: AgentOrchestrator,
) -> None:
    cid = await _run(orch, "first")
    await _run(orch, "second", cid)
    await _run(orch, "third", cid)

    report = await orch.context_report(cid)

    assert report.trend == (20_000, 50_000, 80_000)
    context = report.session.context
    assert (context.used_tokens, context.limit_tokens) == (80_000, 100_000)
    assert context.window_source is WindowSource.CONFIG
    assert context.tokens_per_turn == 30_000
    assert context.turns_left == 0


async def test_the_breakdown_adds_up_what_each_category_holds(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    cid = await _run(orch, "first")
    report = await orch.context_report(cid)
    stored = dict(
        query(
            data_dir,
            "SELECT category, sum(token_count) FROM messages WHERE conversation_id = ?"
            " GROUP BY category",
            (cid,),
        )
    )
    assert report.breakdown == stored
    assert report.breakdown[MessageCategory.DIALOG.value] > 0


async def test_thresholds_crossings_chain_checkpoints_and_handoffs(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    first = await _run(orch, "first")
    middle = await _run(orch, "first")
    last = await _run(orch, "first")
    other = await Store.open(data_dir / DB_FILENAME)  # what the other parts write
    try:
        async with other.db.transaction() as db:
            await db.execute(
                "UPDATE sessions SET continued_in = ? WHERE conversation_id = ?", (middle, first)
            )
            await db.execute(
                "UPDATE sessions SET continued_from = ?, continued_in = ?"
                " WHERE conversation_id = ?",
                (first, last, middle),
            )
            await db.execute(
                "UPDATE sessions SET continued_from = ? WHERE conversation_id = ?", (middle, last)
            )
            await db.execute(
                "INSERT INTO checkpoints(checkpoint_id, conversation_id, seq, label, created_at)"
                " VALUES ('k1', ?, 1, 'before the refactor', ?)",
                (middle, BASE_US),
            )
        await other.context.record_crossing(middle, ContextLevel.NOTIFY, 50, 100, BASE_US)
        await other.documents.register(
            NewDocument("d1", DocumentKind.HANDOFF, "/repo/h1.md", BASE_US, source_session=middle)
        )
    finally:
        await other.close()

    report = await orch.context_report(middle)

    assert report.chain == (first, middle, last)
    assert [c.label for c in report.checkpoints] == ["before the refactor"]
    assert [c.level for c in report.crossings] == [ContextLevel.NOTIFY]
    assert [d.document_id for d in report.handoffs] == ["d1"]
    assert report.thresholds == {"notify": 50, "reminder": 60, "handoff": 70, "force": 90}
    assert (await orch.context_report(first)).chain == (first, middle, last)


async def test_a_chain_that_loops_is_followed_once(orch: AgentOrchestrator, data_dir: Path) -> None:
    a = await _run(orch, "first")
    b = await _run(orch, "first")
    query(data_dir, "SELECT 1")
    other = await Store.open(data_dir / DB_FILENAME)
    try:
        async with other.db.transaction() as db:
            for source, successor in ((a, b), (b, a)):
                await db.execute(
                    "UPDATE sessions SET continued_in = ?, continued_from = ?"
                    " WHERE conversation_id = ?",
                    (successor, successor, source),
                )
    finally:
        await other.close()

    chain = (await orch.context_report(a)).chain
    assert set(chain) == {a, b}
    assert len(chain) == 2


async def test_an_unknown_session_is_a_typed_error(orch: AgentOrchestrator) -> None:
    with pytest.raises(UnknownConversation):
        await orch.context_report("no-such-session")
