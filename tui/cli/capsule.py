"""``delegate capsule new|request|prompt|check|list|show|edit|remember|inbox|prune``.

Context capsules from the shell; every action has ``--json``. The work is
``core.capsules``' (files, checks, the inbox, the registry) and
:func:`core.drafting.capsule_request.request_capsule`'s (asking a session); this
module only finds the repository, parses and prints.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import DelegateError, InvalidRequest, UnknownConversation
from core.models import ContextDocument, DocumentStatus
from core.orchestrator import AgentOrchestrator
from core.redact import redact
from tui.cli.capsule_inbox import cmd_inbox, cmd_prune, cmd_remember
from tui.cli.capsule_shared import (
    LATEST,
    branch_of,
    capsule_file,
    document_json,
    document_line,
    print_problems,
    problem_json,
    problems_of,
    repo_of,
)
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json, print_safe
from tui.shared.safe_text import visible

if TYPE_CHECKING:
    from tui.capsules.app import CapsuleEditorApp


def add_parser(subparsers: Any) -> None:
    """Add ``capsule`` and its actions to the ``delegate`` command line."""
    capsule = subparsers.add_parser(
        "capsule",
        help="context capsules: new, request, prompt, check, list, show, edit, remember,"
        " inbox, prune",
    )
    csub = capsule.add_subparsers(dest="capsule_command", metavar="ACTION", required=True)

    new = _action(csub, "new", "write the template to a new capsule file (a draft)", cmd_new)
    new.add_argument("--mini", action="store_true", help="the miniature template (300 tokens)")
    new.add_argument("--session", metavar="ID", help="the session the capsule carries on")
    new.add_argument("--objective", metavar="TEXT", default="", help="its primary objective")
    new.add_argument("--budget", type=_positive, metavar="N", help="its token budget")

    request = _action(
        csub, "request", "ask a session for its capsule; save the answer as a draft", cmd_request
    )
    request.add_argument("session", metavar="SESSION", help="session id or a unique prefix (6+)")
    request.add_argument("--mini", action="store_true", help="ask for a miniature capsule")
    request.add_argument("--budget", type=_positive, metavar="N", help="its token budget")
    request.add_argument(
        "--timeout", type=_positive_float, default=600.0, metavar="S", help="seconds (600)"
    )
    request.set_defaults(owner_kind="run")

    prompt = _action(
        csub, "prompt", "print the prompt that asks an agent for a capsule", cmd_prompt
    )
    prompt.add_argument("--session", metavar="ID", help="the session to name in it")
    prompt.add_argument("--file", metavar="PATH", help="where the capsule goes (default: new)")
    prompt.add_argument("--stub", action="store_true", help="also write the empty skeleton")
    prompt.add_argument("--plan-slug", metavar="SLUG", help="the plan's name, if not the branch's")
    prompt.add_argument("--budget", type=_positive, metavar="N", help="its token budget")
    prompt.add_argument("--mini", action="store_true", help="ask for a miniature capsule")

    check = _action(
        csub, "check", "every problem, as path:line: code: message (exit 1 if any)", cmd_check
    )
    check.add_argument(
        "capsules", nargs="*", metavar="PATH|latest", help="capsules to check (latest)"
    )
    check.add_argument("--redact", action="store_true", help="first replace the secrets found")

    listing = _action(csub, "list", "the branch's capsules, newest first", cmd_list)
    listing.add_argument("--all-branches", action="store_true", help="every branch's")

    show = _action(csub, "show", "a capsule: registry row, problems and text", cmd_show)
    show.add_argument("capsule", metavar="PATH|latest", nargs="?", default=LATEST)

    edit = _action(csub, "edit", "open the capsule editor", cmd_edit)
    edit.add_argument("capsule", metavar="PATH|latest", nargs="?", help="default: a new capsule")
    edit.add_argument("--session", metavar="ID", help="the session the capsule carries on")

    remember = _action(csub, "remember", "add an entry to the remember-later inbox", cmd_remember)
    remember.add_argument("reminder", metavar="TEXT", help="what to remember")
    remember.add_argument("--topic", default="", help="its topic")
    remember.add_argument("--next-step", default="", help="the next step it suggests")
    remember.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    inbox = _action(csub, "inbox", "the remember-later inbox; consume entries", cmd_inbox)
    inbox.add_argument("--all", action="store_true", help="consumed entries too")
    inbox.add_argument("--consume", nargs="+", metavar="ID", help="mark entries consumed")
    inbox.add_argument("--into", metavar="PATH|latest", help="the capsule they went into")

    prune = _action(csub, "prune", "delete old capsules (and superseded merged ones)", cmd_prune)
    prune.add_argument(
        "--older-than", type=_positive, required=True, metavar="DAYS", help="age in days"
    )
    prune.add_argument(
        "--merged", action="store_true", help="also superseded capsules of merged branches"
    )


def _action(csub: Any, name: str, help_text: str, handler: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = csub.add_parser(name, help=help_text)
    parser.add_argument("--repo", metavar="DIR", help="the repository (default: the current one)")
    parser.add_argument("--branch", metavar="NAME", help="the branch (default: checked out)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handler)
    return parser


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return number


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return number


async def source_of(orch: AgentOrchestrator, given: str | None) -> tuple[str | None, str | None]:
    """``--session``: ``(marker, session id)``. A session of ours (its id or a unique
    prefix) names it in full; any other text is a free marker, as the seed's
    ``source_session`` allows, checked as data (``invalid_request`` naming the option)."""
    from core.capsules.offer import marker_problem

    if given is None:
        return None, None
    try:
        cid = await orch.resolve_id(given)
    except UnknownConversation:
        if (problem := marker_problem(given)) is not None:
            raise InvalidRequest(f"--session: {problem}") from None
        return given, None
    return cid, cid


async def cmd_new(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.model import DEFAULT_BUDGET, MINI_BUDGET, FrontMatter
    from core.capsules.prompt import UNKNOWN_SESSION
    from core.capsules.registry import register_capsule
    from core.capsules.storage import save_capsule
    from core.capsules.template import capsule_template

    repo = repo_of(args)
    branch = branch_of(args, repo)
    marker, session = await source_of(orch, args.session)
    now = orch.clock().replace(microsecond=0)  # the front matter's and the file name's
    front = FrontMatter(
        branch=branch,
        source_session=marker or UNKNOWN_SESSION,
        created_at=now,
        primary_objective=args.objective,
        token_budget=args.budget or (MINI_BUDGET if args.mini else DEFAULT_BUDGET),
        template="mini" if args.mini else "full",
    )
    text = capsule_template(front)
    path = await asyncio.to_thread(save_capsule, repo, text, branch=branch, created=now)
    document = await register_capsule(
        orch.store,
        path,
        text,
        source_session=marker,
        producer="person",
        status=DocumentStatus.DRAFT,
        created=now,
    )
    await _saved(orch, document, path, session, producer="person")
    if args.json:
        print_json(
            {
                "status": "ok",
                "path": str(path),
                "document": document_json(document),
                "template": front.template,
            }
        )
        return EXIT_OK
    print_safe(f"capsule template written: {path}")
    return EXIT_OK


async def _saved(
    orch: AgentOrchestrator,
    document: ContextDocument,
    path: Path,
    session: str | None,
    *,
    producer: str,
) -> None:
    from core.events import CapsuleSaved

    agent_id = ""
    if session:
        agent_id = (await orch.get_session(session)).agent_id
    await orch.emit(
        CapsuleSaved(
            at=orch.clock(),
            conversation_id=session or "",
            agent_id=agent_id,
            document_id=document.document_id,
            path=str(path),
            producer=producer,
            draft=document.status is DocumentStatus.DRAFT,
        )
    )


async def cmd_request(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.drafting.capsule_request import request_capsule

    session = await orch.resolve_id(args.session)
    draft = await request_capsule(
        orch, session, budget=args.budget, mini=args.mini, timeout_s=args.timeout
    )
    if args.json:
        print_json(
            {
                "status": "ok",
                "path": str(draft.path),
                "document_id": draft.document_id,
                "problems": [problem_json(p) for p in draft.problems],
            }
        )
        return EXIT_OK
    print_safe(f"draft saved: {draft.path} (document {draft.document_id[:8]})")
    if draft.problems:
        print(f"{len(draft.problems)} problem(s) to fix before a launch carries it:")
        print_problems(draft.path, draft.problems)
    return EXIT_OK


async def cmd_prompt(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.prompt import capsule_prompt

    repo = repo_of(args)
    marker, _session = await source_of(orch, args.session)
    prompt = await asyncio.to_thread(
        capsule_prompt,
        repo,
        session=marker,
        file=Path(args.file) if args.file else None,
        stub=args.stub,
        plan_slug=args.plan_slug,
        budget=args.budget,
        now=orch.clock(),
        mini=args.mini,
        prompt_ceiling=orch.settings.capsule_max_tokens,
        branch=args.branch,
    )
    if args.json:
        print_json({"status": "ok", "text": prompt.text, "path": str(prompt.path)})
        return EXIT_OK
    print(prompt.text)
    return EXIT_OK


async def cmd_check(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    repo = repo_of(args)
    report: list[dict[str, Any]] = []
    found = 0
    for spec in args.capsules or [LATEST]:
        path, text = await capsule_file(repo, spec, args.branch)
        redacted = False
        if args.redact:
            text, redacted = await _redacted(path, text)
        problems = await problems_of(orch, repo, path, text)
        found += len(problems)
        report.append(
            {
                "path": str(path),
                "redacted": redacted,
                "problems": [problem_json(p) for p in problems],
            }
        )
        if not args.json:
            if redacted:
                print_safe(f"{path}: secrets replaced with [REDACTED]")
            print_problems(path, problems)
    if args.json:
        print_json({"status": "problems" if found else "ok", "capsules": report})
    return EXIT_ERROR if found else EXIT_OK


async def _redacted(path: Path, text: str) -> tuple[str, bool]:
    """The capsule with its secrets replaced, written back when that changed it."""
    from core.capsules.secrets import redact_capsule
    from core.documents.safe_files import replace_file

    clean = redact_capsule(text)
    if clean == text:
        return text, False
    await asyncio.to_thread(replace_file, path.parent, path.name, clean)
    return clean, True


async def cmd_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.registry import capsule_document
    from core.capsules.storage import list_capsules

    repo = repo_of(args)
    branch = None if args.all_branches else branch_of(args, repo)
    paths = await asyncio.to_thread(list_capsules, repo, branch)
    documents = [await capsule_document(orch.store, path) for path in paths]
    if args.json:
        print_json(
            {
                "capsules": [
                    {"path": str(path), "document": document_json(document)}
                    for path, document in zip(paths, documents, strict=True)
                ]
            }
        )
        return EXIT_OK
    if not paths:
        print("no capsules" + (f" on branch {branch}" if branch else ""))
        return EXIT_OK
    for path, document in zip(paths, documents, strict=True):
        print_safe(document_line(path, document))
    return EXIT_OK


async def cmd_show(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.registry import capsule_document

    repo = repo_of(args)
    path, text = await capsule_file(repo, args.capsule, args.branch)
    document = await capsule_document(orch.store, path)
    problems = await problems_of(orch, repo, path, text)
    if args.json:
        print_json(
            {
                "path": str(path),
                "document": document_json(document),
                "problems": [problem_json(p) for p in problems],
                "text": text,
            }
        )
        return EXIT_OK
    print_safe(document_line(path, document))
    if document is not None and document.consumers:
        print_safe("used by: " + ", ".join(document.consumers))
    print_problems(path, problems)
    print()
    for line in text.splitlines():
        print_safe(line)
    return EXIT_OK


async def cmd_edit(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    """The editor, over the orchestrator this command opened (one store connection)."""
    from tui.shared.keymap_check import check_keymap

    check_keymap(orch.settings.keymap)
    repo = repo_of(args)
    path = None
    if args.capsule:
        path, _ = await capsule_file(repo, args.capsule, args.branch)
    marker, session = await source_of(orch, args.session)
    saved = await editor_over(orch, repo, path, session, source=marker).run_async()
    if args.json:  # after the editor: what it saved last, for a script that opened it
        print_json({"status": "ok", "saved": str(saved) if saved is not None else None})
    elif saved is not None:
        print_safe(f"saved: {saved}")
    return EXIT_OK


def editor_over(
    orch: AgentOrchestrator,
    repo: Path,
    path: Path | None,
    session: str | None,
    **options: Any,
) -> CapsuleEditorApp:
    """The capsule editor app over an orchestrator already open (it closes it on leaving;
    closing twice is harmless). ``options``: the app's own (clock, check delay...)."""
    from tui.capsules.app import CapsuleEditorApp

    async def the_orchestrator() -> AgentOrchestrator:
        return orch

    return CapsuleEditorApp(the_orchestrator, repo, path, session, **options)


async def offer_capsule(orch: AgentOrchestrator, args: argparse.Namespace) -> None:
    """``delegate run --parent`` without ``--capsule``: one hint line on stderr when the
    parent holds context worth carrying (``core.capsules.offer``'s rule)."""
    from core.capsules.offer import capsule_hint, latest_capsule, worth_a_capsule

    if args.parent is None or args.capsule is not None or args.session is not None:
        return
    try:
        parent = await orch.get_session(await orch.resolve_id(args.parent))
    except DelegateError:
        return  # the launch itself says what is wrong with the id
    if not worth_a_capsule(parent):
        return
    short = (await orch.short_ids([parent.conversation_id]))[parent.conversation_id]
    try:
        cwd = Path(args.cwd).expanduser() if args.cwd else Path.cwd()
        latest = await asyncio.to_thread(latest_capsule, cwd)
    except (OSError, DelegateError):  # a folder the launch will refuse with its own error
        latest = None
    print(visible(redact(capsule_hint(parent, short, latest))), file=sys.stderr)
