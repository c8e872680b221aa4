"""Recording returns: the hand-off file registered as a ``return`` document, the step in its
group's chain, and a return that routes on without a usable file turned into no_handoff."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.documents.handoff_registry import digest
from core.errors import HandoffFileInvalid, ReturnGroupUnknown
from core.models import DocumentKind, DocumentStatus
from core.returns.files import write_handoff
from core.returns.model import (
    END,
    INVALID_RETURN,
    AgentRole,
    CompactReturn,
    ParsedReturn,
    ReturnRule,
    RoleLaunch,
)
from core.returns.paths import GroupPaths
from core.returns.registry import answer_of, group_steps, record_return, register_handoff
from core.store import Store
from core.tokens import count_tokens

WHEN = datetime(2026, 11, 27, 6, 15, 2, tzinfo=UTC)
DEV, QA, TL, PM = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)
LINES = ("Implemented JWT auth", "Created 3 files", "15 tests passing")


def handoff(role: AgentRole, status: str, **extra: object) -> dict[str, object]:
    return {"from_agent": role.value, "status": status, "summary": f"{role.value} did it", **extra}


def valid(status: str, tokens: int = 60) -> ParsedReturn:
    return ParsedReturn(CompactReturn(status, LINES), tokens)


async def record(
    store: Store,
    paths: GroupPaths,
    role: AgentRole,
    parsed: ParsedReturn,
    next_role: AgentRole | str | None,
    n: int = 1,
) -> object:
    return await record_return(
        store,
        paths=paths,
        launch=RoleLaunch(role, paths.session, paths.group),
        parsed=parsed,
        next_role=next_role,
        run_id=f"run-{role.value}-{n}",
        conversation_id=f"conv-{role.value}-{n}",
        now=WHEN + timedelta(seconds=n),
    )


async def test_a_valid_return_registers_its_file_and_chains_to_the_previous(
    store: Store, repo: Path
) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    path = write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    first = await record_return(
        store,
        paths=paths,
        launch=RoleLaunch(DEV, "crp-1", "AUTH"),
        parsed=valid("READY_FOR_QA"),
        next_role=QA,
        run_id="run-1",
        conversation_id="conv-1",
        now=WHEN,
    )
    assert (first.seq, first.role, first.status, first.summary) == (1, DEV, "READY_FOR_QA", LINES)
    assert first.next_role == "qa_expert"
    assert first.rule is None
    assert first.handoff_path == str(path)
    assert first.tokens == 60
    assert first.document_id is not None
    document = await store.documents.get(first.document_id)
    text = path.read_text()
    assert document.kind is DocumentKind.RETURN
    assert document.path == str(path)
    assert document.digest == digest(text)
    assert document.token_estimate == count_tokens(text)
    assert (document.source_session, document.run_id) == ("conv-1", "run-1")
    assert document.previous_id is None
    assert document.status is DocumentStatus.FINAL
    assert document.producer == "agent"
    assert document.created_at == WHEN

    write_handoff(paths, QA, handoff(QA, "PASS"))
    second = await record(store, paths, QA, valid("PASS"), TL)
    assert second.seq == 2
    assert second.document_id is not None
    chain = await store.documents.chain(second.document_id)
    assert [d.document_id for d in chain] == [first.document_id, second.document_id]
    assert await store.returns.by_run("run-1") == first
    assert answer_of(second) == CompactReturn("PASS", LINES)


async def test_routing_on_without_a_file_is_no_handoff(store: Store, repo: Path) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    step = await record(store, paths, DEV, valid("READY_FOR_QA", tokens=80), QA)
    assert step.status == INVALID_RETURN
    assert step.rule == ReturnRule.NO_HANDOFF.value
    assert step.next_role is None
    assert step.document_id is None
    assert step.tokens == 80
    assert "handoff_developer.json" in step.reason
    assert str(repo) not in step.reason  # repository-relative, short
    assert len(step.summary) == 3
    assert "no_handoff" in step.summary[0]
    assert "conv-developer-1" in step.summary[2]
    assert step.handoff_path is None  # no file is there to name (the reason names its place)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (handoff(DEV, "BLOCKED"), "says 'BLOCKED' but the return says 'READY_FOR_QA'"),
        (handoff(DEV, "PASS"), "status"),
        ({"from_agent": "developer"}, "summary"),
    ],
)
async def test_a_file_that_disagrees_or_fails_its_schema_is_no_handoff(
    store: Store, repo: Path, content: dict[str, object], problem: str
) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    paths.handoffs_dir.mkdir(parents=True)

    paths.handoff_file(DEV).write_text(json.dumps(content))
    step = await record(store, paths, DEV, valid("READY_FOR_QA"), QA)
    assert step.rule == "no_handoff"
    assert problem in step.reason


async def test_a_symlinked_file_is_no_handoff_and_never_read(
    store: Store, repo: Path, tmp_path: Path
) -> None:

    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(handoff(DEV, "READY_FOR_QA")))
    paths = GroupPaths(repo, "crp-1", "AUTH")
    paths.handoffs_dir.mkdir(parents=True)
    paths.handoff_file(DEV).symlink_to(outside)
    step = await record(store, paths, DEV, valid("READY_FOR_QA"), QA)
    assert step.rule == "no_handoff"
    assert "symbolic link" in step.reason
    assert await store.documents.find(DocumentKind.RETURN) == []


async def test_a_loop_back_records_each_round_with_its_own_document(
    store: Store, repo: Path
) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    first = await record(store, paths, DEV, valid("READY_FOR_QA"), QA, 1)
    write_handoff(paths, QA, handoff(QA, "FAIL"))
    failed = await record(store, paths, QA, valid("FAIL"), DEV, 2)
    # The developer's second round writes the same file again (a scripted agent does).
    write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    again = await record(store, paths, DEV, valid("READY_FOR_QA"), QA, 3)
    assert [s.rule for s in (first, failed, again)] == [None, None, None]
    assert [s.seq for s in await store.returns.for_session("crp-1", "AUTH")] == [1, 2, 3]
    assert again.document_id is not None
    chain = await store.documents.chain(again.document_id)
    assert [d.document_id for d in chain] == [
        first.document_id,
        failed.document_id,
        again.document_id,
    ]


async def test_a_return_that_ends_the_chain_needs_no_file(store: Store, repo: Path) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    step = await record(store, paths, PM, valid("BAZINGA"), END)
    assert step.rule is None
    assert step.status == "BAZINGA"
    assert step.next_role == END
    assert step.document_id is None
    no_route = await record(store, paths, DEV, valid("BLOCKED"), None, 2)
    assert no_route.rule is None
    assert no_route.next_role is None


async def test_a_pm_file_that_is_there_is_registered(store: Store, repo: Path) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    write_handoff(paths, PM, handoff(PM, "BAZINGA"))
    step = await record(store, paths, PM, valid("BAZINGA"), END)
    assert step.document_id is not None


async def test_an_invalid_return_keeps_its_rule_and_still_registers_a_valid_file(
    store: Store, repo: Path
) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    verbose = ParsedReturn(
        CompactReturn(INVALID_RETURN, ("a", "b", "c")),
        3000,
        rule=ReturnRule.VERBOSE,
        reason="text outside the JSON",
    )
    step = await record(store, paths, DEV, verbose, None)
    assert (step.status, step.rule, step.reason) == (INVALID_RETURN, "verbose", verbose.reason)
    assert step.summary == ("a", "b", "c")
    assert step.next_role is None
    assert step.document_id is not None


async def test_paths_of_another_group_are_refused(store: Store, repo: Path) -> None:
    with pytest.raises(ValueError, match="different groups"):
        await record_return(
            store,
            paths=GroupPaths(repo, "crp-1", "AUTH"),
            launch=RoleLaunch(DEV, "crp-1", "PAY"),
            parsed=valid("READY_FOR_QA"),
            next_role=QA,
            run_id=None,
            conversation_id=None,
            now=WHEN,
        )


async def test_group_steps_says_when_nothing_is_recorded(store: Store, repo: Path) -> None:
    with pytest.raises(ReturnGroupUnknown, match="crp-9") as caught:
        await group_steps(store, "crp-9")
    assert caught.value.code == "return_group_unknown"
    paths = GroupPaths(repo, "crp-9", "AUTH")
    await record(store, paths, PM, valid("BAZINGA"), END)
    assert len(await group_steps(store, "crp-9")) == 1
    with pytest.raises(ReturnGroupUnknown, match="group 'PAY'"):
        await group_steps(store, "crp-9", "PAY")


async def test_parallel_returns_of_many_groups_record_every_step(store: Store, repo: Path) -> None:
    groups = [GroupPaths(repo, "crp-par", f"G{n}") for n in range(8)]
    for paths in groups:
        write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
        write_handoff(paths, QA, handoff(QA, "PASS"))
    started = time.perf_counter()
    steps = await asyncio.gather(
        *(
            record(store, paths, role, valid(status), nxt, n)
            for n, paths in enumerate(groups)
            for role, status, nxt in ((DEV, "READY_FOR_QA", QA), (QA, "PASS", TL))
        )
    )
    elapsed = time.perf_counter() - started
    print(f"\n16 parallel record_return calls: {elapsed * 1000:.0f} ms")
    assert all(step.rule is None for step in steps)
    for paths in groups:
        recorded = await store.returns.for_session("crp-par", paths.group)
        assert sorted(s.seq for s in recorded) == [1, 2]
        assert {s.role for s in recorded} == {DEV, QA}
    assert len(await store.documents.find(DocumentKind.RETURN)) == 16


async def test_recording_one_return_is_quick(store: Store, repo: Path) -> None:
    times = []
    for n in range(30):
        paths = GroupPaths(repo, "crp-t", f"G{n}")
        write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA", padding="word " * 400))
        started = time.perf_counter()
        await record(store, paths, DEV, valid("READY_FOR_QA"), QA, n)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(f"\nrecord_return (2 kB hand-off file): median {median * 1000:.1f} ms")
    assert median < 0.5


async def test_a_file_registered_by_hand_is_one_row_and_still_fresh_for_the_run(
    store: Store, repo: Path
) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    first = await register_handoff(store, paths=paths, role=DEV, now=WHEN)
    assert await register_handoff(store, paths=paths, role=DEV, now=WHEN) == first
    assert (first.kind, first.producer, first.run_id) == (DocumentKind.RETURN, "person", None)
    step = await record(store, paths, DEV, valid("READY_FOR_QA"), QA)
    assert step.rule is None
    assert step.document_id not in (None, first.document_id)
    with pytest.raises(HandoffFileInvalid):
        await register_handoff(store, paths=paths, role=QA, now=WHEN)


async def test_a_secret_in_a_return_summary_is_not_stored(store: Store, repo: Path) -> None:
    # A role's three summary lines come from the agent: a key it echoed must not reach
    # the store, whatever its shape.
    paths = GroupPaths(repo, "crp-sec", "AUTH")
    write_handoff(paths, DEV, handoff(DEV, "READY_FOR_QA"))
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    lines = ("Wired billing", f"used STRIPE_KEY={key} from the vault", "the password is hunter2")
    parsed = ParsedReturn(CompactReturn("READY_FOR_QA", lines), 60)
    step = await record(store, paths, DEV, parsed, QA)
    [stored] = await store.returns.for_session("crp-sec", "AUTH")
    for recorded in (step, stored):
        text = "\n".join(recorded.summary)  # type: ignore[attr-defined]
        assert key not in text
        assert "hunter2" not in text
        assert "[REDACTED]" in text
        assert "Wired billing" in text
