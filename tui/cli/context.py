"""``delegate context SESSION [--json]``: a session's context, as the orchestrator reports it.

The figures in use and the window with where it came from (and a clamp), the
recent rate and the turns left at it, the trend, the breakdown by category,
the threshold level reached and the crossings recorded, checkpoints, hand-off
documents and the hand-off chain.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.context.report import level_reached, report_payload
from core.models import ContextLevel, ContextReport, ContextUsage
from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK, print_json
from tui.shared.formatting import sparkline

LEVEL_NAMES = {
    ContextLevel.OK: "below every threshold",
    ContextLevel.NOTIFY: "notify level",
    ContextLevel.REMINDER: "reminder level",
    ContextLevel.HANDOFF: "hand-off level",
    ContextLevel.FORCE: "force level: no further prompt is sent",
}
SOURCE_NAMES = {
    "": "unknown: the default",
    "model": "model",
    "recorded": "recorded by the agent",
    "config": "config",
    "clamp": "clamped",
}


def add_parser(subparsers: Any) -> None:
    """Add ``context`` to the ``delegate`` command line."""
    context = subparsers.add_parser(
        "context", help="a session's context: figures, window, thresholds crossed, chain"
    )
    context.add_argument("conversation_id", metavar="SESSION", help="id or a unique prefix (6+)")
    context.add_argument("--json", action="store_true")
    context.set_defaults(handler=cmd_context)


def _figures(context: ContextUsage) -> str:
    from tui.shared import formatting as fmt

    if not context.known:
        return fmt.UNKNOWN_USAGE
    approx = fmt.ESTIMATE if context.estimated else ""
    return (
        f"{approx}{fmt.tokens(context.used_tokens)} / {fmt.tokens(context.limit_tokens)} tokens"
        f" ({approx}{context.percent:.0f}%)"
    )


def report_lines(report: ContextReport) -> list[str]:
    """The report for people, one fact a line."""
    from tui.shared import formatting as fmt

    session, context = report.session, report.session.context
    window = f"window {fmt.tokens(context.limit_tokens)} ({SOURCE_NAMES[context.window_source]}"
    if context.clamped_from is not None:
        window += f" from the parent's {fmt.tokens(context.clamped_from)}"
    window += ")"
    lines = [
        f"{session.conversation_id} · {session.agent_id} · {session.shown_title}",
        f"context {_figures(context)} · {window}"
        + (f" · model {context.model}" if context.model else ""),
    ]
    if context.estimated:
        lines.append("≈ estimated since a compaction: the summary and the system prompt")
    if context.tokens_per_turn > 0:
        lines.append(
            f"rate {fmt.tokens(context.tokens_per_turn)} per turn"
            f" · about {context.turns_left} turns left"
        )
    level = level_reached(context.percent, report.thresholds)
    threshold = report.thresholds.get(level.value)
    lines.append(
        f"{LEVEL_NAMES[level]}"
        + (f" ({threshold}%)" if threshold is not None else "")
        + " · thresholds "
        + ", ".join(f"{name} {pct}%" for name, pct in report.thresholds.items())
    )
    if report.crossings:
        lines.append(
            "crossed "
            + ", ".join(
                f"{c.level.value} at {fmt.tokens(c.used_tokens)} ({c.crossed_at:%Y-%m-%d %H:%M})"
                for c in report.crossings
            )
        )
    if report.trend:
        lines.append(
            f"trend {sparkline(report.trend)} {fmt.tokens(report.trend[0])}"
            f" → {fmt.tokens(report.trend[-1])} over {len(report.trend)} turns"
        )
    if report.breakdown:
        lines.append(
            "breakdown "
            + " · ".join(f"{name} {fmt.tokens(n)}" for name, n in report.breakdown.items())
        )
    if len(report.chain) > 1:
        lines.append(
            "chain "
            + " → ".join(
                f"[{cid}]" if cid == session.conversation_id else cid for cid in report.chain
            )
        )
    for checkpoint in report.checkpoints:
        lines.append(
            f"checkpoint {checkpoint.checkpoint_id} at message {checkpoint.seq}"
            + (f": {checkpoint.label}" if checkpoint.label else "")
        )
    for document in report.handoffs:
        lines.append(f"hand-off {document.document_id} ({document.status.value}) {document.path}")
    return lines


async def cmd_context(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    report = await orch.context_report(args.conversation_id)
    if args.json:
        print_json({"context": report_payload(report)})
        return EXIT_OK
    from tui.cli import render

    for line in report_lines(report):
        print(render.shown(line))
    return EXIT_OK
