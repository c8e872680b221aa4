"""A four-group compact-return cycle put in a real store (what the panel shows of returns).

One artifacts session, ``ARTIFACTS``, run from the primary session ``PRIMARY``:
AUTH went developer → QA → tech lead → PM to BAZINGA (done); BILLING went back to
the developer once and waits on QA; EXPORT's developer broke the protocol (an
invalid return stopped it); SEARCH passed QA and waits on the tech lead. An older
session, ``EARLIER``, ended long ago. Each step of ``ARTIFACTS`` ran in a sub-agent
session of ``PRIMARY``; the hand-off files are written under ``<repo>/.delegate/artifacts``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from tui_support import FIXED_NOW, FIXED_NOW_US, session_with

from core.clock import to_us
from core.config import DB_FILENAME
from core.events import ChainEnded, HistoryEvent, ReturnAccepted, ReturnRejected
from core.returns.model import END, INVALID_RETURN, AgentRole
from core.store import FinishedSession, Store
from core.store.returns import NewReturnStep

ARTIFACTS = "crp-20261121-204500-3fa9"
EARLIER = "crp-20261120-101500-77c1"
PRIMARY = "9c0a1b2c-0000-4000-8000-000000000001"
MINUTE_US = 60_000_000

DEV, QA, TL, PM = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)


@dataclass(frozen=True)
class Step:
    """One step of the scenario (``handoff``: its file is written and named)."""

    session: str
    group: str
    role: AgentRole
    status: str
    summary: tuple[str, ...]
    next_role: str | None
    minutes_ago: int
    handoff: bool = True
    rule: str | None = None
    reason: str = ""
    tokens: int = 140


STEPS = [
    Step(
        EARLIER,
        "LOGIN",
        DEV,
        "READY_FOR_QA",
        ("Added the login form", "Created 2 files: login.py, test_login.py", "8 tests passing"),
        QA.value,
        1500,
    ),
    Step(
        EARLIER,
        "LOGIN",
        QA,
        "PASS",
        ("Tested the login form", "Ran 12 integration tests", "12/12 passed"),
        TL.value,
        1490,
    ),
    Step(
        EARLIER,
        "LOGIN",
        TL,
        "APPROVED",
        ("Reviewed the login form", "Checked security and tests", "Approved"),
        PM.value,
        1480,
    ),
    Step(
        EARLIER,
        "LOGIN",
        PM,
        "BAZINGA",
        ("Tracked the login work", "1 group complete, 0 remaining", "BAZINGA"),
        END,
        1470,
        handoff=False,
    ),
    Step(
        ARTIFACTS,
        "AUTH",
        DEV,
        "READY_FOR_QA",
        (
            "Implemented JWT authentication",
            "Created 3 files: jwt_handler.py, auth_middleware.py, test_jwt.py",
            "15 tests passing, 92% coverage",
        ),
        QA.value,
        14,
    ),
    Step(
        ARTIFACTS,
        "AUTH",
        QA,
        "PASS",
        (
            "Tested JWT implementation",
            "Ran 25 integration/contract/E2E tests",
            "25/25 passed, quality excellent",
        ),
        TL.value,
        11,
    ),
    Step(
        ARTIFACTS,
        "AUTH",
        TL,
        "APPROVED",
        (
            "Reviewed JWT implementation",
            "Checked security, architecture, coverage",
            "Approved, ready for merge",
        ),
        PM.value,
        8,
    ),
    Step(
        ARTIFACTS,
        "AUTH",
        PM,
        "BAZINGA",
        ("Tracked the AUTH group", "1 group complete, 3 remaining", "BAZINGA"),
        END,
        6,
        handoff=False,
    ),
    Step(
        ARTIFACTS,
        "BILLING",
        DEV,
        "READY_FOR_QA",
        (
            "Implemented invoice totals",
            "Modified 2 files: invoice.py, test_invoice.py",
            "9 tests passing, 88% coverage",
        ),
        QA.value,
        13,
    ),
    Step(
        ARTIFACTS,
        "BILLING",
        QA,
        "FAIL",
        (
            "Tested invoice totals",
            "Ran 14 integration tests",
            "12/14 passed: rounding of tax lines fails",
        ),
        DEV.value,
        10,
    ),
    Step(
        ARTIFACTS,
        "BILLING",
        DEV,
        "READY_FOR_QA",
        (
            "Fixed the rounding of tax lines",
            "Modified invoice.py, added 2 tests",
            "11 tests passing, 90% coverage",
        ),
        QA.value,
        4,
    ),
    Step(
        ARTIFACTS,
        "EXPORT",
        DEV,
        INVALID_RETURN,
        (
            "The developer's return broke the protocol (verbose)",
            "It held 2,140 tokens of text around its JSON",
            "Full text: delegate_sessions messages 0cd1e9a0",
        ),
        None,
        9,
        handoff=False,
        rule="verbose",
        reason="2,140 tokens of text before the JSON return",
        tokens=2140,
    ),
    Step(
        ARTIFACTS,
        "SEARCH",
        DEV,
        "READY_FOR_QA",
        (
            "Implemented full-text search",
            "Created 2 files: search.py, test_search.py",
            "21 tests passing, 95% coverage",
        ),
        QA.value,
        12,
    ),
    Step(
        ARTIFACTS,
        "SEARCH",
        QA,
        "PASS",
        ("Tested full-text search", "Ran 18 integration tests", "18/18 passed"),
        TL.value,
        7,
    ),
]


def conversation_of(index: int) -> str:
    """The sub-agent session a step ran in (short ids differ: the count leads)."""
    return f"{index + 1:02x}d1e9a0-0000-4000-8000-{index + 1:012x}"


def run_of(index: int) -> str:
    return f"{index + 1:02x}a0a0a0-0000-4000-8000-{index + 1:012x}"


def handoff_file(repo: Path, step: Step) -> Path:
    return (
        repo
        / ".delegate"
        / "artifacts"
        / step.session
        / step.group
        / "handoffs"
        / f"handoff_{step.role.value}.json"
    )


def handoff_content(step: Step) -> dict[str, object]:
    """What the role wrote for the next one (the seed's shape, abridged)."""
    content: dict[str, object] = {
        "from_agent": step.role.value,
        "status": step.status,
        "summary": step.summary[0],
        "session_id": step.session,
        "group_id": step.group,
    }
    if step.role is DEV:
        content |= {
            "files_modified": ["src/auth/jwt_handler.py", "src/middleware/auth.py"],
            "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
            "branch": f"feature/group-{step.group}",
        }
    elif step.role is QA:
        content |= {"total_tests": {"passed": 25, "failed": 0}, "failures": []}
    elif step.role is TL:
        content |= {"decision": step.status, "code_quality_score": 9, "required_changes": []}
    return content


def sessions(repo: Path) -> list[FinishedSession]:
    """The primary and, under it, one sub-agent session per step of ARTIFACTS; EARLIER's
    steps ran in sessions of their own."""
    primary = session_with(
        PRIMARY,
        ["Ship auth, billing, export and search", "Four groups launched."],
        title="Ship the four features",
        minutes_ago=3,
        cwd=str(repo),
    )
    children = []
    for index, step in enumerate(STEPS):
        child = session_with(
            conversation_of(index),
            ["Your role ...", json.dumps({"status": step.status})],
            title=f"{step.group} {step.role.value}",
            minutes_ago=step.minutes_ago,
            cwd=str(repo),
        )
        if step.session == EARLIER:
            children.append(child)  # run on its own, before the primary started
            continue
        children.append(
            dataclasses.replace(
                child, session=dataclasses.replace(child.session, parent_id=PRIMARY)
            )
        )
    return [primary, *children]


def return_events() -> list[HistoryEvent]:
    """What the runs of ARTIFACTS told the bus, oldest first: a valid return, an
    invalid one, a chain that reached the end."""
    auth_dev, export_dev, auth_pm = 4, 11, 7
    at = FIXED_NOW - timedelta(minutes=5)
    return [
        ReturnAccepted(
            at=at,
            conversation_id=conversation_of(auth_dev),
            run_id=run_of(auth_dev),
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="AUTH",
            role=DEV.value,
            status="READY_FOR_QA",
            summary=STEPS[auth_dev].summary,
            next_role=QA.value,
            handoff_path="/x/.delegate/artifacts/AUTH/handoffs/handoff_developer.json",
            tokens=138,
            display="🔨 Group AUTH [Developer] | Implemented JWT authentication | Created 3"
            " files: jwt_handler.py, auth_middleware.py, test_jwt.py | 15 tests passing,"
            " 92% coverage → QA Expert",
        ),
        ReturnRejected(
            at=at + timedelta(seconds=30),
            conversation_id=conversation_of(export_dev),
            run_id=run_of(export_dev),
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="EXPORT",
            role=DEV.value,
            rule="verbose",
            reason=STEPS[export_dev].reason,
            tokens=2140,
        ),
        ChainEnded(
            at=at + timedelta(minutes=1),
            conversation_id=conversation_of(auth_pm),
            agent_id="echo",
            artifacts_session=ARTIFACTS,
            group_id="AUTH",
            steps=4,
            final_status="BAZINGA",
            reason="end",
        ),
    ]


async def store_events(store: Store, events: list[HistoryEvent]) -> None:
    for event in events:
        await store.history.add(
            to_us(event.at), event.kind, event.conversation_id, None, event.model_dump(mode="json")
        )


async def insert_return_sessions(data_dir: Path, repo: Path, *, steps: bool = True) -> None:
    """The sessions and the history events; with ``steps``, the steps and their files."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.bulk.insert(sessions(repo))
        await store_events(store, return_events())
        if steps:
            await add_steps(store, repo, STEPS)
    finally:
        await store.close()


async def add_steps(store: Store, repo: Path, steps: list[Step]) -> None:
    """Write each step's hand-off file (when it has one) and record the step (one not of
    the scenario gets the ids after its last)."""
    for step in steps:
        index = STEPS.index(step) if step in STEPS else len(STEPS)
        path = handoff_file(repo, step) if step.handoff else None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(handoff_content(step)), encoding="utf-8")
        await store.returns.add(
            NewReturnStep(
                artifacts_session=step.session,
                group_id=step.group,
                role=step.role,
                status=step.status,
                summary=step.summary,
                created_us=FIXED_NOW_US - step.minutes_ago * MINUTE_US,
                run_id=run_of(index),
                conversation_id=conversation_of(index),
                handoff_path=None if path is None else str(path),
                next_role=step.next_role,
                rule=step.rule,
                reason=step.reason,
                tokens=step.tokens,
                step_id=f"step-{index:02d}",
            )
        )
