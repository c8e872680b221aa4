"""``delegate open ID``: a Claude Code or Codex session, in its own CLI, on this terminal.

The session (an id, or a prefix of one delegate knows; a Claude Code or Codex
session id not yet imported is looked up by its transcript) opens as the panel's
``enter`` opens it; a Claude Code session continues by itself in a new session,
in this terminal, once it writes its hand-off (:mod:`core.hooks.attached`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from core import ids
from core.errors import UnknownConversation
from core.models import Session
from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK


def add_parser(subparsers: Any) -> None:
    """Add ``open`` to the ``delegate`` command line."""
    p = subparsers.add_parser(
        "open",
        help="open a Claude Code or Codex session in its CLI here (continues after a hand-off)",
        description="Open a session in its own CLI on this terminal. A Claude Code session"
        " that writes its hand-off is continued in a new session here, by itself.",
    )
    p.add_argument("conversation_id", metavar="ID", help="the session (id or prefix)")
    p.add_argument("--cwd", metavar="DIR", help="open it in DIR (default: its own folder)")
    p.add_argument(
        "--print", action="store_true", help="print the command that opens it; do not run it"
    )
    p.set_defaults(handler=cmd_open)


async def _session(orch: AgentOrchestrator, conversation_id: str) -> Session:
    """The session, importing its transcript first when delegate has not seen it yet."""
    try:
        return await orch.get_session(conversation_id)
    except UnknownConversation:
        if not ids.is_uuid(conversation_id):
            raise
    from core.importing.importer import import_transcript  # deferred: only for a new id

    for source in (ids.CLAUDE_CODE, ids.CODEX):
        if await import_transcript(orch.store, source, ids.validate_id(source, conversation_id)):
            break
    return await orch.get_session(conversation_id)


async def cmd_open(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.hooks.attached import run_continuing
    from core.reopen import reopen_plan

    session = await _session(orch, args.conversation_id)
    plan = await asyncio.to_thread(
        reopen_plan, session, orch.settings, cwd=args.cwd, find_binary=not args.print
    )
    if args.print:
        print(plan.command_line)
        return EXIT_OK

    def notice(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    outcome = await run_continuing(orch, plan, notice=notice)
    return outcome.code
