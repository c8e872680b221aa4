"""``delegate agents``: the configured agents, whether each CLI is installed, and which
one a launch uses when none is named (and why)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from core.orchestrator import AgentOrchestrator
from core.redact import redact
from tui.cli.output import EXIT_OK, print_json, print_safe


def add_parser(subparsers: Any) -> None:
    """``delegate agents [--json]``."""
    agents = subparsers.add_parser("agents", help="configured agents")
    agents.add_argument("--json", action="store_true")
    agents.set_defaults(handler=cmd_agents)


async def cmd_agents(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.errors import NoAgentInstalled
    from core.runners.default_agent import cli_installed, default_agent

    try:
        default = default_agent(orch.settings)
    except NoAgentInstalled:
        default = None
    agents = {
        name: {
            "runner": a.runner,
            "context_limit": a.context_limit,
            "description": redact(a.description),
            "installed": cli_installed(a, name, os.environ),
            "default": default is not None and name == default.agent_id,
        }
        for name, a in sorted(orch.settings.agents.items())
    }
    if default is not None and default.agent_id in agents:
        agents[default.agent_id]["default_because"] = default.reason()
    if args.json:
        print_json(agents)
        return EXIT_OK
    from tui.cli import render

    console = render.make_console()
    render.agents_listing(console, agents)
    if default is None:
        print_safe(
            "default: none: no agent CLI is installed; install Claude Code or Codex, "
            "or name an agent with --agent"
        )
    else:
        print_safe(f"default: {default.agent_id} ({default.reason()})")
    return EXIT_OK
