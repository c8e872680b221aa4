"""``delegate sessions dismiss|restore|rename``: the archive and names from the command line.

``dismiss`` moves a session into the archive (everything kept); ``restore``
brings it back; ``dismiss --purge`` frees what delegate stored for an archived
session (``--force``: one still in the pool) and remembers its id so no import
brings it back. Transcript files Claude Code or Codex wrote are never touched.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """The ``dismiss``, ``restore`` and ``rename`` actions of ``delegate sessions``."""
    dismiss = subparsers.add_parser(
        "dismiss",
        help="move a session into the archive (kept; --purge frees it for good)",
        description="Dismissing archives: the session leaves the reusable pool and can be "
        "restored. --purge frees what delegate stored for an archived session; its "
        "transcript files (Claude Code, Codex) are never deleted.",
    )
    dismiss.add_argument("conversation_id")
    dismiss.add_argument(
        "--purge", action="store_true", help="free what is stored for an archived session"
    )
    dismiss.add_argument(
        "--force", action="store_true", help="with --purge: also a session not archived yet"
    )
    dismiss.add_argument("--json", action="store_true")
    dismiss.set_defaults(handler=cmd_sessions_dismiss)

    restore = subparsers.add_parser("restore", help="bring an archived session back")
    restore.add_argument("conversation_id")
    restore.add_argument("--json", action="store_true")
    restore.set_defaults(handler=cmd_sessions_restore)

    rename = subparsers.add_parser(
        "rename", help="name a session (one line, at most 200 characters; '' clears)"
    )
    rename.add_argument("conversation_id")
    rename.add_argument("name", help="the new name; an empty one clears it")
    rename.add_argument("--json", action="store_true")
    rename.set_defaults(handler=cmd_sessions_rename)


async def cmd_sessions_dismiss(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    if args.force and not args.purge:
        from core.errors import InvalidRequest

        raise InvalidRequest("--force goes with --purge")
    if args.purge:
        session = await orch.get_session(args.conversation_id)
        await orch.purge(session.conversation_id, force=args.force)
        _report(
            args, f"purged {session.conversation_id} ({session.agent_id}: {session.shown_title})"
        )
        return EXIT_OK
    session = await orch.dismiss(args.conversation_id)
    _report(
        args,
        f"archived {session.conversation_id} ({session.agent_id}: {session.shown_title});"
        f" bring it back with: delegate sessions restore {session.conversation_id}",
    )
    return EXIT_OK


async def cmd_sessions_restore(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    session = await orch.restore(args.conversation_id)
    _report(args, f"restored {session.conversation_id} ({session.agent_id}: {session.shown_title})")
    return EXIT_OK


async def cmd_sessions_rename(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    session = await orch.rename(args.conversation_id, args.name)
    what = f"named {session.name!r}" if session.name else "name cleared"
    _report(args, f"{session.conversation_id}: {what}")
    return EXIT_OK


def _report(args: argparse.Namespace, line: str) -> None:
    if args.json:
        print_json({"status": "ok"})
        return
    from tui.cli.render import shown

    print(shown(line))
