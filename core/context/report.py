"""A session's context report: what ``delegate context`` prints and the panel's details show.

Every figure is read, none recomputed: the meter, window and rate are kept on
the session, the trend in ``context_samples``, the crossings once per level.
Only the breakdown by category adds up the stored messages' counts (ours only:
an imported transcript's messages are not copied, so its breakdown is empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.config import ContextSettings
from core.context.thresholds import RISING_LEVELS, threshold_of
from core.models import ContextLevel, ContextReport, DocumentKind, Session

if TYPE_CHECKING:
    from core.store import Store
    from core.store.checkpoints import CheckpointsRepository
    from core.store.context import ContextRepository
    from core.store.documents import DocumentsRepository
    from core.store.messages import MessagesRepository
    from core.store.sessions import SessionsRepository


@dataclass(frozen=True, slots=True)
class ReportRepos:
    """The repositories a context report reads."""

    context: ContextRepository
    sessions: SessionsRepository
    documents: DocumentsRepository
    messages: MessagesRepository
    checkpoints: CheckpointsRepository

    @classmethod
    def of(cls, store: Store) -> ReportRepos:
        return cls(
            store.context, store.sessions, store.documents, store.messages, store.checkpoints
        )


async def build_report(
    repos: ReportRepos | Store, session: Session, thresholds: ContextSettings
) -> ContextReport:
    """Everything about ``session``'s context, with the effective ``thresholds``
    (``repos``: what it reads; a store is read through its repositories)."""
    reads = repos if isinstance(repos, ReportRepos) else ReportRepos.of(repos)
    cid = session.conversation_id
    return ContextReport(
        session=session,
        trend=tuple(await reads.context.trend(cid)),
        breakdown=await reads.messages.tokens_by_category(cid),
        crossings=tuple(await reads.context.crossings(cid)),
        chain=tuple(await reads.sessions.continuation_chain(cid)),
        checkpoints=tuple(await reads.checkpoints.for_session(cid, limit=None)),
        handoffs=tuple(await reads.documents.find(DocumentKind.HANDOFF, source_session=cid)),
        thresholds=threshold_percents(thresholds),
    )


def threshold_percents(ctx: ContextSettings) -> dict[str, int]:
    """The % at which each level starts, by level name (lowest first)."""
    return {level.value: threshold_of(level, ctx) for level in RISING_LEVELS}


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
