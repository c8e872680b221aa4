"""``delegate tool NAME REQUEST``: a JSON tool called from a script, its answer printed as is."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.orchestrator import AgentOrchestrator
from tui.cli.arguments import read_arg
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """``delegate tool delegate_sessions|delegate_agent REQUEST``."""
    tool = subparsers.add_parser(
        "tool", help="call a JSON tool: delegate_sessions or delegate_agent"
    )
    tool.add_argument("name", choices=["delegate_sessions", "delegate_agent"])
    tool.add_argument("request", help="request JSON, or - to read it from stdin")
    tool.set_defaults(handler=cmd_tool)


async def cmd_tool(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.tools import call_tool, is_error

    response = await call_tool(orch, args.name, read_arg(args.request))
    print_json(response)
    sys.stdout.flush()
    return EXIT_ERROR if is_error(response) else EXIT_OK
