"""``delegate handoff list|show|write|continue|prune``: hand-off documents from the shell.

Every action has ``--json``. The work is :class:`core.continuation.Continuation`'s
and :func:`core.continuation.retention.prune_handoffs`'s; this module only
parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator
from tui.cli.arguments import limit
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json


def add_parser(subparsers: Any) -> None:
    """Add ``handoff`` and its actions to the ``delegate`` command line."""
    handoff = subparsers.add_parser(
        "handoff", help="hand-off documents: list, show, write, continue, prune"
    )
    hsub = handoff.add_subparsers(dest="handoff_command", metavar="ACTION", required=True)
    h_list = hsub.add_parser("list", help="hand-off documents, newest first")
    h_list.add_argument("--session", metavar="ID", help="only those this session wrote")
    h_list.add_argument(
        "--status", choices=[s.value for s in DocumentStatus], help="only with this status"
    )
    h_list.add_argument("--limit", type=limit, default=20, help="how many, 1..100 (20)")
    h_list.add_argument("--json", action="store_true")
    h_list.set_defaults(handler=cmd_handoff_list)
    h_show = hsub.add_parser("show", help="a hand-off: its chain, status and text")
    h_show.add_argument("document", metavar="FILE|ID", help="the document's path or id")
    h_show.add_argument("--json", action="store_true")
    h_show.set_defaults(handler=cmd_handoff_show)
    h_write = hsub.add_parser(
        "write", help="hand a session off now (and continue it, as at the threshold)"
    )
    h_write.add_argument("session", metavar="SESSION", help="session id or a unique prefix (6+)")
    h_write.add_argument("--json", action="store_true")
    h_write.set_defaults(handler=cmd_handoff_write, owner_kind="run")
    h_continue = hsub.add_parser(
        "continue", help="start a new session from a hand-off and wait for its first reply"
    )
    h_continue.add_argument("document", metavar="FILE|ID", help="the document's path or id")
    h_continue.add_argument("--json", action="store_true")
    h_continue.set_defaults(handler=cmd_handoff_continue, owner_kind="run")
    h_prune = hsub.add_parser(
        "prune", help="archive finished chains; delete archives past retention_days"
    )
    h_prune.add_argument("--dry-run", action="store_true", help="say what would happen only")
    h_prune.add_argument("--json", action="store_true")
    h_prune.set_defaults(handler=cmd_handoff_prune)


def document_json(document: ContextDocument) -> dict[str, Any]:
    return document.model_dump(mode="json")


def _line(document: ContextDocument) -> str:
    from tui.cli import render

    created = document.created_at.strftime("%Y-%m-%d %H:%M")
    session = document.source_session or "-"
    return render.shown(
        f"{document.document_id[:8]}  {created}  {document.status.value:<8}  "
        f"{document.producer or '-':<6}  {session}  {document.path}"
    )


async def cmd_handoff_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    session = await orch.resolve_id(args.session) if args.session else None
    status = DocumentStatus(args.status) if args.status else None
    documents = await orch.find_documents(
        DocumentKind.HANDOFF, source_session=session, status=status, limit=args.limit
    )
    if args.json:
        print_json({"handoffs": [document_json(d) for d in documents]})
        return EXIT_OK
    if not documents:
        print("no hand-offs" + (f" of session {session}" if session else ""))
        return EXIT_OK
    for document in documents:
        print(_line(document))
    return EXIT_OK


async def cmd_handoff_show(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    import asyncio

    from core.continuation.service import Continuation
    from core.documents.handoff_files import read_handoff_file
    from core.documents.handoff_template import validate_handoff
    from tui.cli import render

    document, path = await Continuation(orch).lookup(args.document)
    text = await asyncio.to_thread(read_handoff_file, path)
    chain = await orch.document_chain(document.document_id) if document else []
    problems = validate_handoff(text)
    if args.json:
        print_json(
            {
                "document": document_json(document) if document else None,
                "path": str(path),
                "chain": [d.document_id for d in chain],
                "problems": problems,
                "text": text,
            }
        )
        return EXIT_OK
    if document is None:
        print(f"{path}: not registered (`delegate handoff continue` registers it)")
    else:
        print(_line(document))
        if len(chain) > 1:
            print(f"handoff #{len(chain)} of its chain: " + " -> ".join(d.path for d in chain))
    for problem in problems:
        print(render.shown(f"problem: {problem}"))
    print()
    print(render.shown(text))
    return EXIT_OK


async def cmd_handoff_write(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.continuation.service import Continuation
    from tui.shared.formatting import handoff_outcome_line

    outcome = await Continuation(orch).hand_off(await orch.resolve_id(args.session))
    if args.json:
        print_json(
            {
                "status": "ok" if outcome.document is not None else "error",
                # The outcome as every front end has it; the keys beside it stay for
                # scripts written before it.
                "outcome": outcome.model_dump(mode="json"),
                "document": document_json(outcome.document) if outcome.document else None,
                "successor_id": outcome.successor_id,
                "pending": outcome.pending,
                "failure": outcome.failure,
            }
        )
    else:
        print(handoff_outcome_line(outcome))
    return EXIT_OK if outcome.document is not None else EXIT_ERROR


async def cmd_handoff_continue(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.continuation.service import Continuation

    service = Continuation(orch)
    document = await service.document(args.document)
    session = await service.continue_from(document.document_id)
    if args.json:
        print_json(
            {
                "status": "ok",
                "conversation_id": session.conversation_id,
                "continued_from": session.continued_from,
                "document_id": document.document_id,
                "path": document.path,
            }
        )
        return EXIT_OK
    print(f"continued in session {session.conversation_id} from {document.path}")
    latest = await orch.latest_run(session.conversation_id)
    if latest is not None and latest.output:
        from tui.cli import render

        print()
        print(render.shown(latest.output))
    return EXIT_OK


async def cmd_handoff_prune(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.continuation.retention import prune_handoffs

    report = await prune_handoffs(orch, dry_run=args.dry_run)
    if args.json:
        print_json(
            {
                "status": "ok",
                "dry_run": args.dry_run,
                "archived": report.archived,
                "deleted": report.deleted,
                "forgotten": report.forgotten,
                "kept": report.kept,
            }
        )
        return EXIT_OK
    would = "would be " if args.dry_run else ""
    for label, paths in (
        ("archived", report.archived),
        ("deleted", report.deleted),
        ("forgotten (file gone)", report.forgotten),
    ):
        for path in paths:
            print(f"{would}{label}: {path}")
    print(
        f"{len(report.archived)} archived, {len(report.deleted)} deleted,"
        f" {len(report.forgotten)} forgotten, {report.kept} kept (work still going on)"
        + (" (dry run: nothing changed)" if args.dry_run else "")
    )
    return EXIT_OK
