"""A session's context report: what ``delegate context`` prints and the panel's details show.

Every figure is read, none recomputed: the meter, window and rate are kept on
the session, the trend in ``context_samples``, the crossings once per level.
Only the breakdown by category adds up the stored messages' counts (ours only:
an imported transcript's messages are not copied, so its breakdown is empty).
"""

from __future__ import annotations

from core.config import ContextSettings
from core.models import (
    Checkpoint,
    ContextLevel,
    ContextReport,
    DocumentKind,
    MessageCategory,
    Session,
)
from core.store import Store
from core.store.rows import clamp_count, clamp_time

CHAIN_LIMIT = 1_000
"""A hand-off chain longer than this is cut (a stored loop never runs forever)."""


async def build_report(
    store: Store, session: Session, thresholds: ContextSettings
) -> ContextReport:
    """Everything about ``session``'s context, with the effective ``thresholds``."""
    cid = session.conversation_id
    return ContextReport(
        session=session,
        trend=tuple(await store.context.trend(cid)),
        breakdown=await _breakdown(store, cid),
        crossings=tuple(await store.context.crossings(cid)),
        chain=await _chain(store, session),
        checkpoints=await _checkpoints(store, cid),
        handoffs=tuple(await store.documents.find(DocumentKind.HANDOFF, source_session=cid)),
        thresholds=threshold_percents(thresholds),
    )


def threshold_percents(ctx: ContextSettings) -> dict[str, int]:
    """The % at which each level starts, by level name (lowest first)."""
    return {
        ContextLevel.NOTIFY.value: ctx.notify_user_at,
        ContextLevel.REMINDER.value: ctx.reminder,
        ContextLevel.HANDOFF.value: ctx.handoff,
        ContextLevel.FORCE.value: ctx.force,
    }


async def _breakdown(store: Store, conversation_id: str) -> dict[str, int]:
    rows = await store.db.fetch_all(
        "SELECT category, sum(token_count) AS tokens FROM messages"
        " WHERE conversation_id = ? GROUP BY category",
        (conversation_id,),
    )
    known = {c.value for c in MessageCategory}
    return {
        str(r["category"]): clamp_count(r["tokens"]) for r in rows if str(r["category"]) in known
    }


async def _links(store: Store, conversation_id: str) -> tuple[str | None, str | None]:
    row = await store.db.fetch_one(
        "SELECT continued_from, continued_in FROM sessions WHERE conversation_id = ?",
        (conversation_id,),
    )
    if row is None:
        return None, None
    before, after = row["continued_from"], row["continued_in"]
    return (
        before if isinstance(before, str) and before else None,
        after if isinstance(after, str) and after else None,
    )


async def _chain(store: Store, session: Session) -> tuple[str, ...]:
    """The hand-off chain through ``session``, oldest first (links to gone sessions end it)."""
    seen = {session.conversation_id}
    older: list[str] = []
    cid: str | None = session.continued_from
    while cid is not None and cid not in seen and len(seen) < CHAIN_LIMIT:
        seen.add(cid)
        older.append(cid)
        cid = (await _links(store, cid))[0]
    newer: list[str] = []
    cid = session.continued_in
    while cid is not None and cid not in seen and len(seen) < CHAIN_LIMIT:
        seen.add(cid)
        newer.append(cid)
        cid = (await _links(store, cid))[1]
    return (*reversed(older), session.conversation_id, *newer)


async def _checkpoints(store: Store, conversation_id: str) -> tuple[Checkpoint, ...]:
    rows = await store.db.fetch_all(
        "SELECT checkpoint_id, seq, label, created_at FROM checkpoints"
        " WHERE conversation_id = ? ORDER BY created_at, checkpoint_id",
        (conversation_id,),
    )
    return tuple(
        Checkpoint(
            checkpoint_id=str(r["checkpoint_id"]),
            conversation_id=conversation_id,
            seq=clamp_count(r["seq"]),
            label=str(r["label"] or ""),
            created_at=clamp_time(r["created_at"]),
        )
        for r in rows
    )
