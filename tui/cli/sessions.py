"""``delegate sessions list|show|stop``, and the ``sessions`` group its other actions join
(archive and names, search): which sessions a person or a script sees, and how.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.models import SessionScope, SessionSort
from core.orchestrator import AgentOrchestrator
from tui.cli import archive, search
from tui.cli.arguments import PLAIN_HELP, limit
from tui.cli.output import EXIT_OK, print_json
from tui.cli.runs import report_stop


def add_parser(subparsers: Any) -> None:
    """``delegate sessions ACTION``: list, show, dismiss, restore, rename, stop, search."""
    sessions = subparsers.add_parser(
        "sessions", help="list, show, search, dismiss or stop reusable sessions"
    )
    ssub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    s_list = ssub.add_parser("list", help="reusable sessions, newest first")
    s_list.add_argument("--limit", type=limit, default=20, help="page size, 1..100 (20)")
    s_list.add_argument("--cursor", help="next_cursor from a previous page")
    s_list.add_argument("--json", action="store_true", help="print the tool's JSON")
    s_list.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    s_list.add_argument("--archived", action="store_true", help="list the archive instead")
    s_list.add_argument(
        "--sort",
        choices=[s.value for s in SessionSort],
        default=SessionSort.ACTIVITY.value,
        help="activity: newest activity first (default); created: newest created first",
    )
    s_list.set_defaults(handler=cmd_sessions_list)
    s_show = ssub.add_parser("show", help="a session and its last messages")
    s_show.add_argument("conversation_id")
    s_show.add_argument("--last", type=limit, default=10, help="messages to show (10)")
    s_show.add_argument("--cursor", help="next_cursor to page back to older messages")
    s_show.add_argument("--json", action="store_true")
    s_show.set_defaults(handler=cmd_sessions_show)
    archive.add_parser(ssub)
    s_stop = ssub.add_parser(
        "stop", help="stop a session's run in flight, whichever process on this host drives it"
    )
    s_stop.add_argument("id", metavar="ID", help="conversation id or run id")
    s_stop.add_argument("--json", action="store_true")
    s_stop.set_defaults(handler=cmd_sessions_stop)
    search.add_parser(ssub)


async def cmd_sessions_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    scope = SessionScope(top_level=False, archived=args.archived, sort=SessionSort(args.sort))
    page = await orch.list_sessions(args.limit, args.cursor, scope=scope)
    if args.json:
        print_json(page.model_dump(mode="json"))
        return EXIT_OK
    from tui.cli import render

    console = render.make_console(plain=args.plain)
    ids = (
        {}
        if render.is_plain(console)
        else await orch.short_ids(s.conversation_id for s in page.sessions)
    )
    render.sessions_table(console, page, orch.clock(), ids)
    return EXIT_OK


async def cmd_sessions_show(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    session = await orch.get_session(args.conversation_id)
    page = await orch.recent_messages(session.conversation_id, args.last, args.cursor)
    if args.json:
        print_json({"session": session.model_dump(mode="json"), **page.model_dump(mode="json")})
        return EXIT_OK
    from tui.cli import render

    render.session_detail(
        render.make_console(), session, page, orch.clock(), newest=args.cursor is None
    )
    return EXIT_OK


async def cmd_sessions_stop(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    """Stop the run in flight of a session (or a run id), whichever process drives it."""
    return report_stop(await orch.stop_run(args.id), as_json=args.json)
