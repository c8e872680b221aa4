"""``delegate demo``: deterministic demo sessions put into the store, or taken out."""

from __future__ import annotations

import argparse
from typing import Any

from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK


def add_parser(subparsers: Any) -> None:
    """``delegate demo [--sessions N] [--clear]``."""
    demo = subparsers.add_parser("demo", help="fill the store with deterministic demo sessions")
    demo.add_argument("--sessions", type=int, default=50, help="how many (50)")
    demo.add_argument("--clear", action="store_true", help="remove the demo sessions instead")
    demo.set_defaults(handler=cmd_demo)


async def cmd_demo(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    if args.clear:
        removed = await orch.clear_demo()
        print(f"removed {removed} demo sessions from {orch.store.path}")
        return EXIT_OK
    from core import demo
    from core.clock import to_us
    from core.tokens import count_tokens

    added = await demo.fill(orch.store, args.sessions, to_us(orch.clock()), count_tokens)
    skipped = args.sessions - added
    note = f" ({skipped} already present)" if skipped else ""
    print(f"added {added} demo sessions to {orch.store.path}{note}")
    return EXIT_OK
