"""Sessions with context figures, put in a real store: windows, clamps, samples, crossings,
checkpoints, hand-off documents and chains (what the panel's context details show)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from tui_support import FIXED_NOW_US, session_with

from core.config import DB_FILENAME
from core.models import ContextLevel, DocumentKind, DocumentStatus, MessageCategory, Role
from core.store import FinishedSession, NewMessage, Store
from core.store.documents import NewDocument

# Three sessions of one hand-off chain: FIRST -> MIDDLE -> NEWEST (a hand-off waiting).
FIRST = "c0ffee01-0000-4000-8000-000000000001"
MIDDLE = "c0ffee02-0000-4000-8000-000000000002"
NEWEST = "c0ffee03-0000-4000-8000-000000000003"
# NEWEST's sub-agent, clamped below its window.
CLAMPED = "c0ffee04-0000-4000-8000-000000000004"
HANDOFF_DOC = "doc-handoff-waiting"
HANDOFFS = ".delegate/handoffs"
MINUTE_US = 60_000_000


@dataclass(frozen=True)
class Figures:
    used: int
    limit: int = 200_000


def _session(cid: str, title: str, used: int, minutes_ago: int, **kw: object) -> FinishedSession:
    base = session_with(cid, ["a prompt", "a reply"], title=title, minutes_ago=minutes_ago, **kw)  # type: ignore[arg-type]
    return FinishedSession(
        session=base.session,
        messages=base.messages,
        last_interacted_us=base.last_interacted_us,
        state=base.state,
        last_run_status=base.last_run_status,
        context_tokens=used,
    )


async def insert_at(data_dir: Path, sessions: dict[str, int], cwd: str = "/home/dev/src/x") -> None:
    """Sessions (id -> tokens in use of a 200k window) in ``cwd``, newest first."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.bulk.insert(
            [
                _session(cid, f"session at {used // 2000}%", used, minutes_ago=i + 1, cwd=cwd)
                for i, (cid, used) in enumerate(sessions.items())
            ]
        )
    finally:
        await store.close()


def _update(data_dir: Path, sql: str, params: tuple[object, ...]) -> None:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute(sql, params)


async def insert_chain(data_dir: Path, repo: Path) -> None:
    """The hand-off chain FIRST -> MIDDLE -> NEWEST. NEWEST is at 72% of its window with
    a trend, crossings, messages of every category, two checkpoints and a hand-off
    waiting for a person (``HANDOFF_DOC``, following MIDDLE's); CLAMPED is its sub-agent,
    clamped to 32k below NEWEST's 200k."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        newest = _session(NEWEST, "Refactor the billing module", 144_000, 1, cwd=str(repo))
        await store.bulk.insert(
            [
                FinishedSession(
                    session=newest.session,
                    messages=_every_category(NEWEST),
                    last_interacted_us=newest.last_interacted_us,
                    state=newest.state,
                    last_run_status=newest.last_run_status,
                    context_tokens=144_000,
                ),
                _session(MIDDLE, "Continue the billing refactor", 150_000, 20, cwd=str(repo)),
                _session(FIRST, "Start the billing refactor", 150_000, 40, cwd=str(repo)),
                _session(CLAMPED, "Check the invoice tests", 20_000, 2, cwd=str(repo)),
            ]
        )
        for turn, used in enumerate((40_000, 70_000, 95_000, 120_000, 144_000), start=1):
            at = FIXED_NOW_US - (10 - turn) * MINUTE_US
            await store.context.record_sample(NEWEST, turn, used, 200_000, at)
        for level, used, minutes in (
            (ContextLevel.NOTIFY, 104_000, 6),
            (ContextLevel.REMINDER, 120_000, 5),
            (ContextLevel.HANDOFF, 144_000, 4),
        ):
            at = FIXED_NOW_US - minutes * MINUTE_US
            await store.context.record_crossing(NEWEST, level, used, 200_000, at)
        previous = None
        for number, (source, status, minutes) in enumerate(
            (
                (FIRST, DocumentStatus.CONSUMED, 40),
                (MIDDLE, DocumentStatus.CONSUMED, 20),
                (NEWEST, DocumentStatus.PENDING, 4),
            )
        ):
            at = FIXED_NOW_US - minutes * MINUTE_US
            doc = await store.documents.register(
                NewDocument(
                    document_id=HANDOFF_DOC if source == NEWEST else f"doc-handoff-{number}",
                    kind=DocumentKind.HANDOFF,
                    path=str(repo / HANDOFFS / f"handoff-2026-11-21-20{60 - minutes:02d}00.md"),
                    created_us=at,
                    source_session=source,
                    previous_id=previous,
                    status=status,
                    producer="agent" if source == FIRST else "facts",
                )
            )
            previous = doc.document_id
    finally:
        await store.close()
    _update(
        data_dir,
        "UPDATE sessions SET model = 'claude-sonnet-4-5', window_source = 'model'"
        " WHERE conversation_id = ?",
        (NEWEST,),
    )
    store = await Store.open(data_dir / DB_FILENAME)
    try:  # linked as a continuation links them: the older ones are handed off
        for old, new in ((FIRST, MIDDLE), (MIDDLE, NEWEST)):
            title = (await store.sessions.get(new)).title
            await store.sessions.link_continuation(old, new)
            _update(
                data_dir, "UPDATE sessions SET title = ? WHERE conversation_id = ?", (title, new)
            )
    finally:
        await store.close()
    _update(
        data_dir,
        "UPDATE sessions SET parent_id = ?, context_limit = 32000, clamped_from = 200000,"
        " window_source = 'clamp', model = 'small-model' WHERE conversation_id = ?",
        (NEWEST, CLAMPED),
    )
    for seq, label, minutes in ((2, "before the split", 8), (4, "", 7)):
        _update(
            data_dir,
            "INSERT INTO checkpoints(checkpoint_id, conversation_id, seq, label, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (f"ckpt-{seq}", NEWEST, seq, label, FIXED_NOW_US - minutes * MINUTE_US),
        )


def _every_category(cid: str) -> list[NewMessage]:
    """A system prompt, a shared document, a prompt and a tool call: 144k tokens in all."""
    parts = (
        (Role.SYSTEM, "You are a careful engineer.", 3_000, None, None),
        (Role.USER, "The hand-off you continue from.", 12_000, MessageCategory.CONTEXT, None),
        (Role.USER, "Split the invoice builder.", 80_000, None, None),
        (Role.ASSISTANT, "Running the tests.", 49_000, None, {"name": "Bash"}),
    )
    return [
        NewMessage(
            id=f"{cid}/m{i}",
            role=role,
            content=content,
            created_us=FIXED_NOW_US - (10 - i) * MINUTE_US,
            token_count=tokens,
            category=category,
            tool=tool,
        )
        for i, (role, content, tokens, category, tool) in enumerate(parts)
    ]


def style_at(text: Text, needle: str) -> str:
    """The styles of the spans covering the first character of ``needle`` in ``text``."""
    at = text.plain.index(needle)
    return " ".join(
        str(span.style) for span in text.spans if span.start <= at < span.end and span.style
    )
