"""Return steps in the store: seq per group under parallel writers, listings, deletion."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
import uuid
from pathlib import Path

from support import BASE_US

from core.config import DB_FILENAME
from core.models import DocumentKind
from core.returns.model import END, INVALID_RETURN, AgentRole, ReturnRule
from core.store import NewDocument, NewReturnStep, Store

SUMMARY = ("did the thing", "changed two files", "all tests pass")


def step(
    session: str,
    group: str,
    role: AgentRole = AgentRole.DEVELOPER,
    *,
    at: int = BASE_US,
    next_role: str | None = "qa_expert",
    **fields: object,
) -> NewReturnStep:
    return NewReturnStep(
        artifacts_session=session,
        group_id=group,
        role=role,
        status=str(fields.pop("status", "READY_FOR_QA")),
        summary=SUMMARY,
        created_us=at,
        next_role=next_role,
        **fields,  # type: ignore[arg-type]
    )


async def test_a_step_round_trips_with_its_seq(store: Store) -> None:
    first = await store.returns.add(
        step("s1", "AUTH", run_id="run-1", conversation_id="c-1", handoff_path="/r/h.json")
    )
    assert first.seq == 1
    assert first.role is AgentRole.DEVELOPER
    assert first.summary == SUMMARY
    assert first.run_id == "run-1"
    assert first.conversation_id == "c-1"
    assert first.handoff_path == "/r/h.json"
    assert first.next_role == "qa_expert"
    assert first.created_us == BASE_US
    invalid = await store.returns.add(
        step(
            "s1",
            "AUTH",
            AgentRole.QA_EXPERT,
            status=INVALID_RETURN,
            next_role=None,
            rule=ReturnRule.VERBOSE.value,
            reason="text outside the JSON",
            tokens=2400,
            run_id="run-2",
        )
    )
    assert invalid.seq == 2
    assert invalid.rule == "verbose"
    assert invalid.reason == "text outside the JSON"
    assert invalid.tokens == 2400
    assert await store.returns.by_run("run-2") == invalid
    assert await store.returns.by_run("nope") is None
    assert await store.returns.get(first.step_id) == first
    assert await store.returns.latest("s1", "AUTH") == invalid
    assert await store.returns.latest("s1", "OTHER") is None


async def test_listing_is_by_group_then_seq(store: Store) -> None:
    for group in ("B", "A", "B", "A", "C"):
        await store.returns.add(step("s", group))
    await store.returns.add(step("other", "A"))
    listed = await store.returns.for_session("s")
    assert [(s.group_id, s.seq) for s in listed] == [
        ("A", 1),
        ("A", 2),
        ("B", 1),
        ("B", 2),
        ("C", 1),
    ]
    assert [s.seq for s in await store.returns.for_session("s", "B")] == [1, 2]
    assert await store.returns.for_session("unknown") == []


async def test_parallel_writers_in_one_and_many_groups_get_dense_unique_seqs(
    store: Store, data_dir: Path
) -> None:
    other = await Store.open(data_dir / DB_FILENAME)  # a second connection writes too
    try:
        groups = [f"G{i}" for i in range(10)]
        writes = [
            (store if n % 2 else other).returns.add(step("par", groups[n % 10], at=BASE_US + n))
            for n in range(1000)
        ]
        started = time.perf_counter()
        added = await asyncio.gather(*writes)
        elapsed = time.perf_counter() - started
    finally:
        await other.close()
    print(f"\n1000 parallel adds over two connections: {elapsed * 1000:.0f} ms")
    assert len({s.step_id for s in added}) == 1000
    listed = await store.returns.for_session("par")
    assert len(listed) == 1000
    for group in groups:
        seqs = [s.seq for s in listed if s.group_id == group]
        assert seqs == list(range(1, 101))


async def test_two_processes_writing_one_group_never_collide(store: Store, data_dir: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from core.returns.model import AgentRole
        from core.store import NewReturnStep, Store

        async def main() -> None:
            store = await Store.open(Path({str(data_dir / DB_FILENAME)!r}))
            try:
                await asyncio.gather(*(
                    store.returns.add(NewReturnStep(
                        artifacts_session="proc", group_id="SAME", role=AgentRole.DEVELOPER,
                        status="READY_FOR_QA", summary=("a", "b", "c"), created_us=1,
                    ))
                    for _ in range(100)
                ))
            finally:
                await store.close()

        asyncio.run(main())
        """
    )
    children = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", script) for _ in range(2)
    ]
    await asyncio.gather(*(store.returns.add(step("proc", "SAME")) for _ in range(50)))
    for child in children:
        assert await asyncio.wait_for(child.wait(), 120) == 0
    seqs = [s.seq for s in await store.returns.for_session("proc", "SAME")]
    assert seqs == list(range(1, 251))


async def test_sessions_tell_running_from_ended(store: Store) -> None:
    await store.returns.add(step("ended", "A", at=BASE_US + 1, next_role="qa_expert"))
    await store.returns.add(step("ended", "A", at=BASE_US + 2, next_role=END))
    await store.returns.add(step("ended", "B", at=BASE_US + 3, next_role=None))
    await store.returns.add(step("running", "A", at=BASE_US + 5, next_role=END))
    await store.returns.add(step("running", "B", at=BASE_US + 4, next_role="tech_lead"))
    listed = {s.artifacts_session: s for s in await store.returns.sessions()}
    assert [s.artifacts_session for s in await store.returns.sessions()] == ["running", "ended"]
    ended, running = listed["ended"], listed["running"]
    assert (ended.groups, ended.steps, ended.running, ended.ended) == (2, 3, 0, True)
    assert (running.groups, running.steps, running.running, running.ended) == (2, 2, 1, False)
    assert int(ended.last_at.timestamp() * 1_000_000) == BASE_US + 3


async def test_deleting_a_session_takes_its_rows_and_return_documents_only(
    store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / ".delegate/artifacts/gone"

    async def document(path: Path, kind: DocumentKind = DocumentKind.RETURN) -> str:
        document_id = str(uuid.uuid4())
        await store.documents.register(
            NewDocument(document_id=document_id, kind=kind, path=str(path), created_us=BASE_US)
        )
        return document_id

    named = await document(folder / "A/handoffs/handoff_developer.json")
    orphan = await document(folder / "B/handoffs/handoff_developer.json")
    kept = await document(tmp_path / ".delegate/artifacts/kept/A/handoffs/handoff_developer.json")
    prefix_twin = await document(tmp_path / ".delegate/artifacts/gone2/A/handoffs/h.json")
    await store.returns.add(step("gone", "A", document_id=named))
    await store.returns.add(step("gone", "A"))
    await store.returns.add(step("kept", "A", document_id=kept))
    deleted = await store.returns.delete_session("gone", [str(folder)])
    assert (deleted.steps, deleted.documents) == (2, 2)
    assert await store.returns.for_session("gone") == []
    assert [s.document_id for s in await store.returns.for_session("kept")] == [kept]
    remaining = {d.document_id for d in await store.documents.find(DocumentKind.RETURN)}
    assert remaining == {kept, prefix_twin}
    assert orphan not in remaining
    again = await store.returns.delete_session("gone", [str(folder)])
    assert (again.steps, again.documents) == (0, 0)


async def test_a_row_of_an_unknown_role_is_left_out(store: Store) -> None:
    await store.returns.add(step("s", "A"))
    async with store.db.transaction() as db:
        await db.execute("UPDATE return_steps SET role = 'astronaut', summary = '{bad'")
    assert await store.returns.for_session("s") == []
    assert (await store.returns.sessions())[0].steps == 1


async def test_sessions_ended_before_a_time_are_found_however_many_newer_ones_exist(
    store: Store,
) -> None:
    await store.returns.add(step("oldest", "A", at=BASE_US, next_role=END))
    await store.returns.add(step("old-running", "A", at=BASE_US, next_role="qa_expert"))
    for n in range(30):
        await store.returns.add(step(f"new-{n}", "A", at=BASE_US + 1000 + n, next_role=END))
    assert len(await store.returns.sessions(limit=10)) == 10
    found = await store.returns.sessions(limit=10, ended_before_us=BASE_US + 1000)
    assert [s.artifacts_session for s in found] == ["oldest"]
