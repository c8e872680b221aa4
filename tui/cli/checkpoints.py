"""``delegate checkpoint mark|list|restore|fork``: marks in a session to go back to.

Restore rewinds one of delegate's own sessions (the state before is saved and
the restore can be undone); fork copies a session up to a mark into a new one.
A Claude Code or Codex session forks in its own CLI (``--print`` shows how).
"""

from __future__ import annotations

import argparse
from typing import Any

from core.errors import InvalidRequest
from core.models import Checkpoint, Session
from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """Add ``checkpoint`` and its actions to the ``delegate`` command line."""
    checkpoint = subparsers.add_parser(
        "checkpoint", help="mark a session at a message; list, restore or fork from a mark"
    )
    csub = checkpoint.add_subparsers(dest="checkpoint_command", metavar="ACTION", required=True)
    mark = csub.add_parser("mark", help="mark a session at a message (default: its newest)")
    mark.add_argument("conversation_id", metavar="ID", help="the session (id or prefix)")
    mark.add_argument("--at", type=int, metavar="SEQ", help="the message's number")
    mark.add_argument("--label", default="", help="one line saying what the mark is")
    mark.add_argument("--json", action="store_true")
    mark.set_defaults(handler=cmd_mark)
    listing = csub.add_parser("list", help="a session's checkpoints, oldest first")
    listing.add_argument("conversation_id", metavar="ID", help="the session (id or prefix)")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_list)
    restore = csub.add_parser(
        "restore", help="rewind a session of delegate's own to a mark (undoable)"
    )
    restore.add_argument("checkpoint_id", metavar="CHECKPOINT", help="id or a prefix (6+)")
    restore.add_argument(
        "--into", metavar="ID", help="the session to rewind (default: the checkpoint's own)"
    )
    restore.add_argument("--json", action="store_true")
    restore.set_defaults(handler=cmd_restore)
    fork = csub.add_parser("fork", help="a new session from a mark")
    fork.add_argument("checkpoint_id", metavar="CHECKPOINT", help="id or a prefix (6+)")
    fork.add_argument(
        "--print",
        action="store_true",
        help="a Claude Code or Codex session: print the command that forks it, do not run it",
    )
    fork.add_argument("--json", action="store_true")
    fork.set_defaults(handler=cmd_fork)


def checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    data: dict[str, Any] = checkpoint.model_dump(mode="json")
    return data


def _line(checkpoint: Checkpoint) -> str:
    from tui.shared.safe_text import visible

    label = f"  {visible(checkpoint.label)}" if checkpoint.label else ""
    when = checkpoint.created_at.strftime("%Y-%m-%d %H:%M")
    return f"{checkpoint.checkpoint_id}  message {checkpoint.seq}  {when}{label}"


async def cmd_mark(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    checkpoint = await orch.mark_checkpoint(args.conversation_id, args.at, args.label)
    if args.json:
        print_json({"status": "ok", **checkpoint_json(checkpoint)})
    else:
        print(f"marked {_line(checkpoint)}")
    return EXIT_OK


async def cmd_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    checkpoints = await orch.checkpoints(args.conversation_id)
    if args.json:
        print_json({"checkpoints": [checkpoint_json(c) for c in checkpoints]})
        return EXIT_OK
    if not checkpoints:
        print("no checkpoints (delegate checkpoint mark ID adds one)")
    for checkpoint in checkpoints:
        print(_line(checkpoint))
    return EXIT_OK


async def cmd_restore(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    undo = await orch.restore_checkpoint(args.checkpoint_id, into=args.into)
    source = await orch.get_checkpoint(args.checkpoint_id)
    target = args.into or source.conversation_id
    if args.json:
        print_json({"status": "ok", "undo": checkpoint_json(undo)})
        return EXIT_OK
    print(
        f"restored to message {source.seq}; the state before is saved as session"
        f" {undo.conversation_id} (archived)\n"
        f"undo: delegate checkpoint restore {undo.checkpoint_id} --into {target}"
    )
    return EXIT_OK


async def cmd_fork(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    checkpoint = await orch.get_checkpoint(args.checkpoint_id)
    session = await orch.get_session(checkpoint.conversation_id)
    if not await orch.keeps_conversation(session):
        return await _fork_in_cli(orch, session, checkpoint, args)
    if args.print:
        raise InvalidRequest("--print is for Claude Code and Codex sessions (their own CLI forks)")
    fork = await orch.fork_checkpoint(checkpoint.checkpoint_id)
    if args.json:
        print_json({"status": "ok", "session": fork.model_dump(mode="json")})
    else:
        print(f"forked {fork.conversation_id} from {session.conversation_id}", end="")
        print(f" at message {checkpoint.seq}")
    return EXIT_OK


async def _fork_in_cli(
    orch: AgentOrchestrator, session: Session, checkpoint: Checkpoint, args: argparse.Namespace
) -> int:
    """An agent CLI's session forks in that CLI (its files are never written here)."""
    import asyncio

    from core.reopen import fork_plan, run_attached

    plan = await asyncio.to_thread(
        fork_plan, session, checkpoint, orch.settings, find_binary=not args.print
    )
    if args.print:
        if args.json:
            print_json({"status": "ok", "argv": list(plan.argv), "cwd": str(plan.cwd)})
        else:
            print(plan.command_line)
        return EXIT_OK
    return await run_attached(plan)
