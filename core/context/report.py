"""A session's context report: what ``delegate context`` prints and the panel's details show.

Every figure is read, none recomputed: the meter, window and rate are kept on
the session, the trend in ``context_samples``, the crossings once per level.
Only the breakdown by category adds up the stored messages' counts (ours only:
an imported transcript's messages are not copied, so its breakdown is empty).
"""

from __future__ import annotations

from typing import Any

from core.config import ContextSettings
from core.context.thresholds import RISING_LEVELS, threshold_of
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
        chain=tuple(await store.sessions.continuation_chain(cid)),
        checkpoints=await _checkpoints(store, cid),
        handoffs=tuple(await store.documents.find(DocumentKind.HANDOFF, source_session=cid)),
        thresholds=threshold_percents(thresholds),
    )


def threshold_percents(ctx: ContextSettings) -> dict[str, int]:
    """The % at which each level starts, by level name (lowest first)."""
    return {level.value: threshold_of(level, ctx) for level in RISING_LEVELS}


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


def level_reached(percent: float, thresholds: dict[str, int]) -> ContextLevel:
    """The highest level whose threshold (the report's, by level name) ``percent`` reached."""
    reached = ContextLevel.OK
    for level in RISING_LEVELS:
        if percent >= thresholds.get(level.value, 101):
            reached = level
    return reached


def report_payload(report: ContextReport) -> dict[str, Any]:
    """The report as JSON (``delegate context --json``, the tool's ``context``): the
    figures flat, with the level they reached, the rest as stored."""
    context = report.session.context
    return {
        "conversation_id": report.session.conversation_id,
        "agent_id": report.session.agent_id,
        "known": context.known,
        "estimated": context.estimated,
        "used_tokens": context.used_tokens,
        "limit_tokens": context.limit_tokens,
        "percent": round(context.percent, 1),
        "model": context.model,
        "window_source": context.window_source.value,
        "clamped_from": context.clamped_from,
        "tokens_per_turn": context.tokens_per_turn,
        "turns_left": context.turns_left,
        "level": level_reached(context.percent, report.thresholds).value,
        "thresholds": report.thresholds,
        "trend": list(report.trend),
        "breakdown": report.breakdown,
        "crossings": [c.model_dump(mode="json") for c in report.crossings],
        "chain": list(report.chain),
        "continued_from": report.session.continued_from,
        "continued_in": report.session.continued_in,
        "checkpoints": [c.model_dump(mode="json") for c in report.checkpoints],
        "handoffs": [d.model_dump(mode="json") for d in report.handoffs],
    }
