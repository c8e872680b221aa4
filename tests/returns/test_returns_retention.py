"""Cleaning artifacts sessions: exactly the session's folder and rows, no link followed;
retention keeps running chains and honours keep_days."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import DocumentKind
from core.orchestrator import AgentOrchestrator
from core.returns.files import write_handoff
from core.returns.model import END, AgentRole, CompactReturn, ParsedReturn, RoleLaunch
from core.returns.paths import GroupPaths, ensure
from core.returns.registry import record_return
from core.returns.retention import clean_session, prune_ended, session_repos
from core.store import NewReturnStep, Store
from core.supervisor import ReturnsRetention, Supervisor

WHEN = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DEV, QA, PM = AgentRole.DEVELOPER, AgentRole.QA_EXPERT, AgentRole.PROJECT_MANAGER
LINES = ("one", "two", "three")


async def step(
    store: Store,
    paths: GroupPaths,
    role: AgentRole,
    status: str,
    next_role: AgentRole | str | None,
    at: datetime = WHEN,
) -> None:
    write_handoff(paths, role, {"from_agent": role.value, "status": status, "summary": "done"})
    await record_return(
        store,
        paths=paths,
        launch=RoleLaunch(role, paths.session, paths.group),
        parsed=ParsedReturn(CompactReturn(status, LINES), 50),
        next_role=next_role,
        run_id=None,
        conversation_id=None,
        now=at,
    )


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


async def test_cleaning_removes_exactly_the_sessions_folder_and_rows(
    store: Store, repo: Path
) -> None:
    gone, kept = GroupPaths(repo, "crp-gone", "AUTH"), GroupPaths(repo, "crp-kept", "AUTH")
    for paths in (gone, kept, GroupPaths(repo, "crp-gone", "PAY")):
        ensure(paths)
        await step(store, paths, DEV, "READY_FOR_QA", QA)
        (paths.reasoning_dir / f"developer_{paths.group}.md").write_text("why")
    twin = repo / ".delegate/artifacts/crp-gone2"  # a name sharing the prefix
    twin.mkdir()
    (twin / "x").write_text("keep")
    before_kept = tree(kept.session_dir)

    report = await clean_session(store, repo, "crp-gone")

    assert report.folders == (gone.session_dir,)
    assert (report.steps, report.documents, report.problems) == (2, 2, ())
    assert not gone.session_dir.exists()
    assert tree(kept.session_dir) == before_kept
    assert (twin / "x").read_text() == "keep"
    assert await store.returns.for_session("crp-gone") == []
    assert len(await store.returns.for_session("crp-kept")) == 1
    documents = await store.documents.find(DocumentKind.RETURN)
    assert [d.path for d in documents] == [str(kept.handoff_file(DEV))]
    again = await clean_session(store, repo, "crp-gone")
    assert not again.removed_anything


async def test_a_link_inside_the_folder_is_unlinked_its_target_untouched(
    store: Store, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("mine")
    paths = ensure(GroupPaths(repo, "crp-1", "AUTH"))
    await step(store, paths, DEV, "READY_FOR_QA", QA)
    (paths.reasoning_dir / "escape").symlink_to(outside, target_is_directory=True)
    (paths.handoffs_dir / "file-link").symlink_to(outside / "precious.txt")
    os.mkfifo(paths.tests_dir / "pipe")  # never opened: removed as a name

    report = await clean_session(store, repo, "crp-1")

    assert report.folders == (paths.session_dir,)
    assert not paths.session_dir.exists()
    assert (outside / "precious.txt").read_text() == "mine"
    assert tree(outside) == ["precious.txt"]


async def test_a_link_in_place_of_the_session_folder_is_removed_as_a_name(
    store: Store, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "AUTH").mkdir(parents=True)
    (outside / "AUTH/keep.txt").write_text("mine")
    (repo / ".delegate/artifacts").mkdir(parents=True)
    (repo / ".delegate/artifacts/crp-1").symlink_to(outside, target_is_directory=True)
    report = await clean_session(store, repo, "crp-1")
    assert report.folders == (repo / ".delegate/artifacts/crp-1",)
    assert not (repo / ".delegate/artifacts/crp-1").is_symlink()
    assert tree(outside) == ["AUTH", "AUTH/keep.txt"]


@pytest.mark.parametrize("level", [".delegate", ".delegate/artifacts"])
async def test_a_linked_level_above_stops_the_clean_and_keeps_the_rows(
    store: Store, repo: Path, tmp_path: Path, level: str
) -> None:
    paths = ensure(GroupPaths(repo, "crp-1", "AUTH"))
    await step(store, paths, DEV, "READY_FOR_QA", QA)
    # Move the real level elsewhere and leave a link in its place.
    elsewhere = tmp_path / "elsewhere"
    (repo / level).rename(elsewhere)
    (repo / level).symlink_to(elsewhere, target_is_directory=True)
    before = tree(elsewhere)

    report = await clean_session(store, repo, "crp-1")

    assert report.folders == ()
    assert len(report.problems) == 1
    assert "symbolic link" in report.problems[0]
    assert tree(elsewhere) == before
    assert len(await store.returns.for_session("crp-1")) == 1


async def test_a_session_that_ran_in_two_repositories_is_cleaned_in_both(
    store: Store, tmp_path: Path
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    await step(store, GroupPaths(first, "crp-1", "A"), DEV, "READY_FOR_QA", QA)
    await step(store, GroupPaths(second, "crp-1", "B"), DEV, "READY_FOR_QA", QA)
    report = await clean_session(store, first, "crp-1")
    assert set(report.folders) == {
        first / ".delegate/artifacts/crp-1",
        second / ".delegate/artifacts/crp-1",
    }
    assert report.steps == 2


def test_recorded_paths_of_another_shape_name_no_repository() -> None:
    good = "/r/.delegate/artifacts/crp-1/AUTH/handoffs/handoff_developer.json"
    assert session_repos("crp-1", [good]) == [Path("/r")]
    assert (
        session_repos(
            "crp-1",
            [
                "relative/.delegate/artifacts/crp-1/AUTH/handoffs/h.json",
                "/r/.delegate/artifacts/crp-2/AUTH/handoffs/h.json",
                "/r/.delegate/other/crp-1/AUTH/handoffs/h.json",
                "/r/.delegate/artifacts/crp-1/../handoffs/h.json",
                "/r/x/artifacts/crp-1/AUTH/handoffs/h.json",
                "/etc",
            ],
        )
        == []
    )


async def test_prune_honours_keep_days_and_leaves_running_chains_alone(
    store: Store, repo: Path
) -> None:
    old, recent, running = (GroupPaths(repo, s, "AUTH") for s in ("old", "recent", "running"))
    await step(store, old, DEV, "READY_FOR_QA", QA, WHEN - timedelta(days=20))
    await step(store, old, PM, "BAZINGA", END, WHEN - timedelta(days=15))
    await step(
        store, GroupPaths(repo, "old", "PAY"), DEV, "BLOCKED", None, WHEN - timedelta(days=16)
    )
    await step(store, recent, PM, "BAZINGA", END, WHEN - timedelta(days=13))
    await step(store, running, PM, "BAZINGA", END, WHEN - timedelta(days=40))
    await step(
        store,
        GroupPaths(repo, "running", "PAY"),
        DEV,
        "READY_FOR_QA",
        QA,
        WHEN - timedelta(days=30),
    )

    assert await prune_ended(store, WHEN, keep_days=14) == ["old"]
    assert not old.session_dir.exists()
    assert recent.session_dir.exists()
    assert running.session_dir.exists()
    assert {s.artifacts_session for s in await store.returns.sessions()} == {"recent", "running"}
    assert await prune_ended(store, WHEN, keep_days=14) == []
    assert await prune_ended(store, WHEN, keep_days=0) == ["recent"]
    assert running.session_dir.exists()


async def test_prune_forgets_rows_whose_folder_is_already_gone(store: Store, repo: Path) -> None:
    paths = GroupPaths(repo, "crp-1", "AUTH")
    await step(store, paths, PM, "BAZINGA", END, WHEN - timedelta(days=30))
    for child in sorted(paths.session_dir.rglob("*"), reverse=True):
        child.unlink() if child.is_file() else child.rmdir()
    paths.session_dir.rmdir()
    assert await prune_ended(store, WHEN, keep_days=14) == ["crp-1"]
    assert await store.returns.sessions() == []


async def test_a_clean_of_an_unknown_session_removes_nothing(store: Store, repo: Path) -> None:
    report = await clean_session(store, repo, "crp-none")
    assert not report.removed_anything
    assert json.dumps(report.problems) == "[]"


async def test_the_leading_supervisors_monitor_prunes_hourly(
    orch: AgentOrchestrator, repo: Path
) -> None:
    now = orch.clock()
    old, fresh = GroupPaths(repo, "crp-old", "AUTH"), GroupPaths(repo, "crp-new", "AUTH")
    await step(orch.store, old, PM, "BAZINGA", END, now - timedelta(days=15))
    supervisor = Supervisor(orch, watch_transcripts=False)
    assert any(isinstance(m, ReturnsRetention) for m in supervisor.monitors)
    monitor = ReturnsRetention()
    await monitor.on_tick(supervisor)
    assert not old.session_dir.exists()
    await step(orch.store, fresh, PM, "BAZINGA", END, now - timedelta(days=15))
    await monitor.on_tick(supervisor)  # within the hour: not looked at again
    assert fresh.session_dir.exists()
    await ReturnsRetention(every_s=0.0).on_tick(supervisor)
    assert not fresh.session_dir.exists()
    assert await orch.store.returns.sessions() == []


async def test_prune_forgets_rows_with_an_id_no_delegate_writes_without_touching_disk(
    store: Store, repo: Path
) -> None:
    await store.returns.add(
        NewReturnStep(
            artifacts_session="../../etc",
            group_id="A",
            role=PM,
            status="BAZINGA",
            summary=LINES,
            created_us=0,
            handoff_path="/.delegate/artifacts/../../etc/A/handoffs/handoff_project_manager.json",
            next_role=END,
        )
    )
    assert await prune_ended(store, WHEN, keep_days=14) == []
    assert await store.returns.sessions() == []
