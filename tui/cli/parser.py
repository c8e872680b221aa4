"""The ``delegate`` command line's full parser: every command group, in the order
``delegate --help`` lists them; each group's module adds its own sub-parser.

Built only for a command (the panel's start reads the global options alone), so the
command modules load only then.
"""

from __future__ import annotations

import argparse

from tui.cli import (
    agents,
    capsule,
    checkpoints,
    context,
    demo,
    handoff,
    history,
    hooks,
    importing,
    launch,
    open_session,
    returns,
    runs,
    sessions,
    store,
    tool,
    watch,
)
from tui.cli.arguments import global_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="delegate",
        description="Terminal session manager for coding-agent delegates. "
        "With no command, opens the session picker.",
    )
    global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tool.add_parser(sub)
    sessions.add_parser(sub)
    runs.add_parser(sub)
    context.add_parser(sub)
    launch.add_parser(sub)
    demo.add_parser(sub)
    history.add_parser(sub)
    agents.add_parser(sub)
    importing.add_parser(sub)
    watch.add_parser(sub)
    handoff.add_parser(sub)
    checkpoints.add_parser(sub)
    hooks.add_parser(sub)
    open_session.add_parser(sub)
    capsule.add_parser(sub)
    returns.add_parser(sub)
    store.add_parser(sub)
    sub.add_parser(
        "mcp", help="serve delegate_sessions and delegate_agent over MCP (stdio)"
    )  # no handler: runs its own event loop (see main)
    return parser
