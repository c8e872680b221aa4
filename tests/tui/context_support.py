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

# Three sessions of one hand-off chain: FIRST -> MIDDLE -> NEWEST.
FIRST = "c0ffee01-0000-4000-8000-000000000001"
MIDDLE = "c0ffee02-0000-4000-8000-000000000002"
NEWEST = "c0ffee03-0000-4000-8000-000000000003"
# A sub-agent clamped below its parent's window.
CLAMPED = "c0ffee04-0000-4000-8000-000000000004"
HANDOFF_DOC = "doc-handoff-0001"
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
    """The chain FIRST -> MIDDLE -> NEWEST (MIDDLE at 72% with its trend, crossings,
    categories, checkpoints and a pending hand-off), and CLAMPED, MIDDLE's sub-agent."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        middle = _session(MIDDLE, "Refactor the billing module", 144_000, 3, cwd=str(repo))
        middle = FinishedSession(
            session=middle.session,
            messages=[
                NewMessage(
                    id=f"{MIDDLE}/sys",
                    role=Role.SYSTEM,
                    content="You are a careful engineer. " * 40,
                    created_us=FIXED_NOW_US - 10 * MINUTE_US,
                    token_count=3_000,
                ),
                NewMessage(
                    id=f"{MIDDLE}/ctx",
                    role=Role.USER,
                    content="The hand-off you continue from.",
                    created_us=FIXED_NOW_US - 9 * MINUTE_US,
                    token_count=12_000,
                    category=MessageCategory.CONTEXT,
                ),
                NewMessage(
                    id=f"{MIDDLE}/u1",
                    role=Role.USER,
                    content="Split the invoice builder.",
                    created_us=FIXED_NOW_US - 8 * MINUTE_US,
                    token_count=80_000,
                ),
                NewMessage(
                    id=f"{MIDDLE}/t1",
                    role=Role.ASSISTANT,
                    content="Running the tests.",
                    created_us=FIXED_NOW_US - 7 * MINUTE_US,
                    token_count=49_000,
                    tool={"name": "Bash"},
                ),
            ],
            last_interacted_us=middle.last_interacted_us,
            state=middle.state,
            last_run_status=middle.last_run_status,
            context_tokens=144_000,
        )
        await store.bulk.insert(
            [
                _session(NEWEST, "Continue the billing refactor", 20_000, 1, cwd=str(repo)),
                middle,
                _session(FIRST, "Start the billing refactor", 150_000, 30, cwd=str(repo)),
                _session(CLAMPED, "Check the invoice tests", 20_000, 2, cwd=str(repo)),
            ]
        )
        for turn, used in enumerate((40_000, 70_000, 95_000, 120_000, 144_000), start=1):
            at = FIXED_NOW_US - (10 - turn) * MINUTE_US
            await store.context.record_sample(MIDDLE, turn, used, 200_000, at)
        for level, used, minutes in (
            (ContextLevel.NOTIFY, 104_000, 6),
            (ContextLevel.REMINDER, 120_000, 5),
            (ContextLevel.HANDOFF, 144_000, 4),
        ):
            at = FIXED_NOW_US - minutes * MINUTE_US
            await store.context.record_crossing(MIDDLE, level, used, 200_000, at)
        first_doc = await store.documents.register(
            NewDocument(
                document_id="doc-handoff-0000",
                kind=DocumentKind.HANDOFF,
                path=str(repo / ".delegate/handoffs/handoff-2026-11-21-203000.md"),
                created_us=FIXED_NOW_US - 30 * MINUTE_US,
                source_session=FIRST,
                status=DocumentStatus.CONSUMED,
                producer="agent",
            )
        )
        await store.documents.register(
            NewDocument(
                document_id=HANDOFF_DOC,
                kind=DocumentKind.HANDOFF,
                path=str(repo / ".delegate/handoffs/handoff-2026-11-21-205600.md"),
                created_us=FIXED_NOW_US - 4 * MINUTE_US,
                source_session=MIDDLE,
                previous_id=first_doc.document_id,
                status=DocumentStatus.PENDING,
                producer="facts",
            )
        )
    finally:
        await store.close()
    _update(
        data_dir,
        "UPDATE sessions SET model = 'claude-sonnet-4-5', window_source = 'model',"
        " continued_from = ?, continued_in = ? WHERE conversation_id = ?",
        (FIRST, NEWEST, MIDDLE),
    )
    _update(
        data_dir,
        "UPDATE sessions SET continued_in = ? WHERE conversation_id = ?",
        (MIDDLE, FIRST),
    )
    _update(
        data_dir,
        "UPDATE sessions SET continued_from = ? WHERE conversation_id = ?",
        (MIDDLE, NEWEST),
    )
    _update(
        data_dir,
        "UPDATE sessions SET parent_id = ?, context_limit = 32000, clamped_from = 200000,"
        " window_source = 'clamp', model = 'small-model' WHERE conversation_id = ?",
        (MIDDLE, CLAMPED),
    )
    for seq, label, minutes in ((1, "before the split", 8), (3, "", 7)):
        _update(
            data_dir,
            "INSERT INTO checkpoints(checkpoint_id, conversation_id, seq, label, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (f"ckpt-{seq}", MIDDLE, seq, label, FIXED_NOW_US - minutes * MINUTE_US),
        )


def style_at(text: Text, needle: str) -> str:
    """The styles of the spans covering the first character of ``needle`` in ``text``."""
    at = text.plain.index(needle)
    return " ".join(
        str(span.style) for span in text.spans if span.start <= at < span.end and span.style
    )
