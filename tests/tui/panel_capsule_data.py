"""Sessions that carried a capsule, capsules in the registry, and the four capsule
history events, put in a real store (what the panel shows of capsules)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import git
from tui_support import FIXED_NOW, FIXED_NOW_US, session_with

from core.clock import to_us
from core.config import DB_FILENAME
from core.events import (
    CapsuleGap,
    CapsuleInjected,
    CapsuleSaved,
    CapsuleStale,
    HistoryEvent,
)
from core.models import DocumentKind, DocumentStatus
from core.store import Store
from core.store.documents import NewDocument

# LAUNCHED was started with FRESH's capsule; STALE_RUN with STALE's, whose files changed since.
LAUNCHED = "ca95u1e1-0000-4000-8000-000000000001"
STALE_RUN = "ca95u1e2-0000-4000-8000-000000000002"
PLAIN = "ca95u1e3-0000-4000-8000-000000000003"
FRESH = "1a2b3c4d-capsule-fresh"
STALE = "5e6f7a8b-capsule-stale"
DRAFT = "d4af7000-capsule-draft"
DRAFT_NAME = "20261121T205500Z.md"
FRESH_DIGEST = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
STALE_DIGEST = "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
CAPSULES = ".delegate/capsules/feature-billing"
MINUTE_US = 60_000_000


def capsule_events(repo: Path) -> list[HistoryEvent]:
    """One of each capsule kind (oldest first), a minute apart; a person's capsule and
    a stale one have no source session."""
    at = [FIXED_NOW - timedelta(minutes=10 - i) for i in range(6)]
    fresh = str(repo / CAPSULES / "20261121T205000Z.md")
    stale = str(repo / CAPSULES / "20261120T101500Z.md")
    return [
        CapsuleSaved(
            at=at[0],
            conversation_id=PLAIN,
            agent_id="echo",
            document_id=FRESH,
            path=fresh,
            producer="agent",
            draft=True,
        ),
        CapsuleSaved(
            at=at[1], conversation_id="", document_id=STALE, path=stale, producer="person"
        ),
        CapsuleInjected(
            at=at[2],
            conversation_id=LAUNCHED,
            run_id="run-launch-0001",
            agent_id="echo",
            document_id=FRESH,
            digest=FRESH_DIGEST,
            path=fresh,
        ),
        CapsuleInjected(
            at=at[3],
            conversation_id=STALE_RUN,
            run_id="run-launch-0002",
            agent_id="echo",
            document_id=STALE,
            digest=STALE_DIGEST,
            path=stale,
            accepted=("reference_stale",),
        ),
        CapsuleGap(
            at=at[4],
            conversation_id=LAUNCHED,
            run_id="run-launch-0001",
            agent_id="echo",
            document_id=FRESH,
            note="Capsule Gap: which\x1b[2J currency the invoices use\nsecond line",
        ),
        CapsuleStale(
            at=at[5],
            conversation_id="",
            document_id=STALE,
            path=stale,
            changed=("billing/invoice.py", "billing/tax.py", "tests/test_tax.py", "README.md"),
        ),
    ]


async def store_events(data_dir: Path, events: list[HistoryEvent]) -> None:
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        for event in events:
            await store.history.add(
                to_us(event.at),
                event.kind,
                event.conversation_id,
                None,
                event.model_dump(mode="json"),
            )
    finally:
        await store.close()


async def insert_capsule_sessions(data_dir: Path, repo: Path, *, write_draft: bool = True) -> None:
    """Three sessions in ``repo``: LAUNCHED carried FRESH, STALE_RUN carried STALE (now
    marked stale in the registry), PLAIN carried none and its agent drafted DRAFT (the
    file written with ``write_draft``: snapshots use a folder that need not exist); and
    the capsule events."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.bulk.insert(
            [
                session_with(
                    cid, ["a prompt", "a reply"], title=title, minutes_ago=i + 1, cwd=str(repo)
                )
                for i, (cid, title) in enumerate(
                    (
                        (LAUNCHED, "Finish the invoice export"),
                        (STALE_RUN, "Fix the tax rounding"),
                        (PLAIN, "Sketch the billing refactor"),
                    )
                )
            ]
        )
        for document_id, digest, name, status, minutes in (
            (FRESH, FRESH_DIGEST, "20261121T205000Z.md", DocumentStatus.FINAL, 10),
            (STALE, STALE_DIGEST, "20261120T101500Z.md", DocumentStatus.STALE, 600),
        ):
            await store.documents.register(
                NewDocument(
                    document_id=document_id,
                    kind=DocumentKind.CAPSULE,
                    path=str(repo / CAPSULES / name),
                    created_us=FIXED_NOW_US - minutes * MINUTE_US,
                    digest=digest,
                    source_session=PLAIN if document_id == FRESH else None,
                    status=status,
                    producer="agent" if document_id == FRESH else "person",
                )
            )
        # PLAIN's agent answered a capsule request: a draft waiting for review, on disk.
        draft = repo / CAPSULES / DRAFT_NAME
        if write_draft:
            draft.parent.mkdir(parents=True, exist_ok=True)
            draft.write_text("---\nbranch: feature-billing\n---\n# Goal\n\nShip the export.\n")
        await store.documents.register(
            NewDocument(
                document_id=DRAFT,
                kind=DocumentKind.CAPSULE,
                path=str(draft),
                created_us=FIXED_NOW_US - 5 * MINUTE_US,
                source_session=PLAIN,
                status=DocumentStatus.DRAFT,
                producer="agent",
            )
        )
    finally:
        await store.close()
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        for cid, document_id, digest in (
            (LAUNCHED, FRESH, FRESH_DIGEST),
            (STALE_RUN, STALE, STALE_DIGEST),
        ):
            db.execute(
                "UPDATE sessions SET capsule_id = ?, capsule_digest = ? WHERE conversation_id = ?",
                (document_id, digest, cid),
            )
    await store_events(data_dir, capsule_events(repo))


# --- a real repository with a capsule the launch accepts ----------------------

BRANCH = "feature-billing"


def git_repo(where: Path) -> Path:
    """A git repository on ``BRANCH`` with ``src/app.py`` committed."""
    root = where / "repo"
    (root / "src").mkdir(parents=True)
    repository = git.Repo.init(root, initial_branch=BRANCH)
    (root / "src" / "app.py").write_text("print('v1')\n", encoding="utf-8")
    repository.index.add(["src/app.py"])
    actor = git.Actor("t", "t@example.invalid")
    repository.index.commit("first", author=actor, committer=actor)
    return root


def valid_capsule(references: str = "") -> str:
    """A capsule that validates clean (every section, within budget); MARKER names it."""
    return f"""---
branch: {BRANCH}
source_session: 20261123-abc
created_at: 2026-11-23T21:00:00Z
primary_objective: "Teach the app to print v2"
token_budget: 1200
version: 0.1
{references}---
# Mission Snapshot
- **User intent:** the app prints v2.
- **Current status:** v1 still printed; {MARKER} names this capsule.

# Key Decisions & Rationale
1. Keep one print call (simplest).

# Active Workstreams
- printing → src/app.py, no blockers.

# Pending Actions
- [ ] Change the literal (next agent).

# Knowledge Base
- `src/app.py` prints v1.

# Risks & Watchpoints
- None known.

# Transcript Highlights
- 2026-11-23T20:55:00Z: the user asked for v2 (message 4).

# Exploratory Threads & User Preferences
- The user prefers short commits.
"""


MARKER = "WIDGET-MARKER-7"
