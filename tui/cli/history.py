"""``delegate history``: launches, follow-ups and dismissals, newest first."""

from __future__ import annotations

import argparse
from typing import Any

from core.orchestrator import AgentOrchestrator
from tui.cli.arguments import PLAIN_HELP, limit
from tui.cli.output import EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """``delegate history [--limit N] [--json|--plain]``."""
    history = subparsers.add_parser("history", help="launches, follow-ups and dismissals")
    history.add_argument("--limit", type=limit, default=20)
    history.add_argument("--json", action="store_true")
    history.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    history.set_defaults(handler=cmd_history)


async def cmd_history(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    events = await orch.history(args.limit)
    if args.json:
        print_json([e.model_dump(mode="json") for e in events])
        return EXIT_OK
    from tui.cli import render

    console = render.make_console(plain=args.plain)
    ids = (
        {} if render.is_plain(console) else await orch.short_ids(e.conversation_id for e in events)
    )
    render.history_table(console, events, orch.clock(), ids)
    return EXIT_OK
