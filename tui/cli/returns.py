"""``delegate returns write|parse|show|prompt|clean``: compact returns from the shell.

Every action has ``--json``. The work is ``core.returns``' (schemas, parsing, routing,
display lines, prompt sections, paths, files, the registry, retention); this module
only finds the repository, parses arguments and prints.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import HandoffFileInvalid, InvalidRequest
from core.orchestrator import AgentOrchestrator
from core.returns.model import END, INVALID_RETURN, AgentRole, ReturnStep
from tui.cli.arguments import read_arg
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json, print_safe

if TYPE_CHECKING:
    from core.returns.model import ParsedReturn
    from core.returns.paths import GroupPaths

NO_GROUP = "-"
"""The group a ``parse`` display line names when ``--group`` is not given."""


def add_parser(subparsers: Any) -> None:
    """Add ``returns`` and its actions to the ``delegate`` command line."""
    returns = subparsers.add_parser(
        "returns", help="compact returns between role agents: write, parse, show, prompt, clean"
    )
    rsub = returns.add_subparsers(dest="returns_command", metavar="ACTION", required=True)

    write = _action(
        rsub,
        "write",
        "check a hand-off file against its role's schema; write it where the next role reads it",
        cmd_write,
    )
    _role(write, required=True)
    _ids(write)
    write.add_argument(
        "--file", required=True, metavar="PATH", help="the hand-off JSON, or - to read stdin"
    )
    _cwd(write)

    parse = _action(
        rsub, "parse", "judge a final message on stdin: the return and its route", cmd_parse
    )
    _role(parse, required=False)
    parse.add_argument("--group", metavar="G", help="the group its display line names (default: -)")

    show = _action(
        rsub, "show", "an artifacts session's chains (no SESSION: every session)", cmd_show
    )
    show.add_argument("session", metavar="SESSION", nargs="?", help="the artifacts session")
    show.add_argument("--group", metavar="G", help="only this group")

    prompt = _action(rsub, "prompt", "print the protocol sections a role's prompt gets", cmd_prompt)
    _role(prompt, required=True)
    _ids(prompt)
    prompt.add_argument(
        "--previous", metavar="ROLE", help="the role before it (adds its Prior Agent Handoff)"
    )
    _cwd(prompt)

    clean = _action(rsub, "clean", "remove an artifacts session's files and its rows", cmd_clean)
    clean.add_argument("session", metavar="SESSION", help="the artifacts session")
    _cwd(clean)


def _action(rsub: Any, name: str, help_text: str, handler: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = rsub.add_parser(name, help=help_text)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handler)
    return parser


def _role(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--agent",
        required=required,
        metavar="ROLE",
        help="the role: developer, senior_software_engineer, qa_expert, tech_lead,"
        " project_manager, investigator, requirements_engineer (or dev, sse, qa, tl, pm)",
    )


def _ids(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", required=True, metavar="S", help="the artifacts session")
    parser.add_argument("--group", required=True, metavar="G", help="the task group")


def _cwd(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", metavar="DIR", help="a folder of the repository (default: the current one)"
    )


# --- where ------------------------------------------------------------------


def _folder(args: argparse.Namespace) -> Path:
    """``--cwd``, else the current folder (its repository is found by ``core.returns``)."""
    if args.cwd is None:
        return Path.cwd()
    folder = Path(args.cwd).expanduser()
    if not folder.is_dir():
        raise InvalidRequest(f"--cwd {args.cwd}: no such folder")
    return folder.resolve()


def _repo(args: argparse.Namespace) -> Path:
    from core.returns.paths import repo_of

    return repo_of(_folder(args))


def _group_paths(args: argparse.Namespace) -> GroupPaths:
    from core.returns.paths import group_paths

    return group_paths(_folder(args), args.session, args.group)


# --- output -----------------------------------------------------------------


def step_json(step: ReturnStep, display: str) -> dict[str, Any]:
    return {
        "step_id": step.step_id,
        "seq": step.seq,
        "agent_role": step.role.value,
        "status": step.status,
        "summary": list(step.summary),
        "next_role": step.next_role,
        "handoff_file": step.handoff_path,
        "document_id": step.document_id,
        "run_id": step.run_id,
        "conversation_id": step.conversation_id,
        "rule": step.rule,
        "reason": step.reason,
        "tokens": step.tokens,
        "created_us": step.created_us,
        "display": display,
    }


def _file_json(paths: GroupPaths, role: AgentRole) -> dict[str, str]:
    """A role's hand-off file: its path (as a step records it) and the one a prompt names."""
    path = paths.handoff_file(role)
    return {"handoff_file": str(path), "relative": paths.relative(path)}


def step_line(step: ReturnStep) -> str:
    """A recorded step's display line, from its recorded answer and route."""
    from core.returns.display import display_line
    from core.returns.registry import answer_of

    return display_line(step.group_id, step.role, answer_of(step), step.next_role)


# --- actions ----------------------------------------------------------------


async def cmd_write(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.returns.files import decode_handoff, write_handoff
    from core.returns.schemas import role_of, validate_handoff

    role = role_of(args.agent)
    paths = _group_paths(args)
    where = "stdin" if args.file == "-" else args.file
    data = decode_handoff(await _handoff_text(args.file), where)
    # Checked first, so a refusal names the file given (and nothing is written).
    handoff = validate_handoff(role, data, where=where)
    path = await asyncio.to_thread(write_handoff, paths, role, data)
    document = await _register(orch, paths, role, path)
    relative = paths.relative(path)
    if args.json:
        print_json(
            {
                "status": "ok",
                "agent_role": role.value,
                "artifacts_session": paths.session,
                "group_id": paths.group,
                **_file_json(paths, role),
                "handoff_status": handoff.status,
                "document_id": document,
            }
        )
        return EXIT_OK
    print_safe(f"hand-off written: {relative}")
    return EXIT_OK


async def _handoff_text(spec: str) -> str:
    """The hand-off file's text: ``-`` is stdin, else a regular file of bounded size."""
    from core.documents.safe_files import read_regular_text
    from core.errors import DocumentInvalid
    from core.returns.files import MAX_HANDOFF_BYTES

    if spec == "-":
        text = read_arg("-", "hand-off file")
        if len(text.encode("utf-8")) > MAX_HANDOFF_BYTES:
            raise HandoffFileInvalid(
                f"the hand-off on stdin is over {MAX_HANDOFF_BYTES:,} bytes; keep details in"
                " the reasoning, tests, reviews or investigations files it points to"
            )
        return text
    path = Path(spec).expanduser()
    try:
        return await asyncio.to_thread(
            read_regular_text, path, what="hand-off", max_bytes=MAX_HANDOFF_BYTES
        )
    except DocumentInvalid as exc:
        raise HandoffFileInvalid(exc.message) from None


async def _register(orch: AgentOrchestrator, paths: GroupPaths, role: AgentRole, path: Path) -> str:
    """Register the file just written as a ``return`` document; its id."""
    from core.returns.registry import register_handoff

    document = await register_handoff(orch.store, paths=paths, role=role, now=orch.clock())
    return document.document_id


async def cmd_parse(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.returns.display import display_line
    from core.returns.routing import Routes

    text = read_arg("-", "final message")
    group = NO_GROUP
    if args.group is not None:
        from core.returns.paths import check_artifact_id

        group = check_artifact_id(args.group, "group id")
    role, parsed = _judged(text, args.agent, orch.settings.returns.max_return_tokens)
    routes = Routes.from_settings(orch.settings.returns)
    next_role = routes.next_role(role, parsed.answer.status) if parsed.valid else None
    display = display_line(group, role, parsed.answer, next_role)
    if args.json:
        print_json(
            {
                "status": "ok" if parsed.valid else "invalid",
                "valid": parsed.valid,
                "agent_role": role.value if args.agent else None,
                "return": parsed.answer.payload(),
                "tokens": parsed.tokens,
                "max_tokens": orch.settings.returns.max_return_tokens,
                "next_role": next_role,
                "rule": parsed.rule.value if parsed.rule else None,
                "reason": parsed.reason,
                "display": display,
            }
        )
    else:
        if parsed.valid:
            route = next_role if next_role is not None else "stop (no route)"
            print_safe(
                f"valid: {role.value} {parsed.answer.status} · {parsed.tokens} tokens"
                f" · next: {route}"
            )
        else:
            rule = parsed.rule.value if parsed.rule else "?"
            print_safe(f"invalid: {rule}: {parsed.reason} · {parsed.tokens} tokens")
        print_safe(display)
    return EXIT_OK if parsed.valid else EXIT_ERROR


def _judged(text: str, agent: str | None, max_tokens: int) -> tuple[AgentRole, ParsedReturn]:
    """The message judged as ``agent``'s; without one, as the first role its status fits
    (a wrong shape is wrong for every role: the first role's verdict says why)."""
    from core.returns.parse import parse_return
    from core.returns.schemas import role_of

    if agent is not None:
        role = role_of(agent)
        return role, parse_return(text, role, max_tokens=max_tokens)
    verdicts = [(role, parse_return(text, role, max_tokens=max_tokens)) for role in AgentRole]
    return next(((r, p) for r, p in verdicts if p.valid), verdicts[0])


async def cmd_show(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.returns.display import missing_handoff
    from core.returns.paths import check_artifact_id
    from core.returns.registry import group_steps

    if args.session is None:
        if args.group is not None:
            raise InvalidRequest("--group needs an artifacts SESSION")
        return await _show_sessions(orch, as_json=args.json)
    session = check_artifact_id(args.session, "artifacts session")
    group = check_artifact_id(args.group, "group id") if args.group is not None else None
    steps = await group_steps(orch.store, session, group)
    groups: dict[str, list[ReturnStep]] = {}
    for step in steps:
        groups.setdefault(step.group_id, []).append(step)
    displays = {step.step_id: step_line(step) for step in steps}
    if args.json:
        print_json(
            {
                "artifacts_session": session,
                "groups": [
                    {
                        "group_id": group_id,
                        "roles": [s.role.value for s in chain],
                        "state": _chain_state(chain[-1]),
                        "next_role": chain[-1].next_role,
                        "steps": [step_json(s, displays[s.step_id]) for s in chain],
                    }
                    for group_id, chain in groups.items()
                ],
                "lines": [displays[s.step_id] for s in steps],
            }
        )
        return EXIT_OK
    for index, (group_id, chain) in enumerate(groups.items()):
        if index:
            print()
        roles = " -> ".join(step.role.value for step in chain)
        print_safe(f"group {group_id} · {roles} ({_chain_state(chain[-1])})")
        for step in chain:
            print_safe(f"  {step.seq}. {displays[step.step_id]}")
            if step.rule:
                print_safe(f"     rule broken: {step.rule}: {step.reason}")
            if step.handoff_path:
                known = "" if step.document_id else " (not registered)"
                print_safe(f"     hand-off: {step.handoff_path}{known}")
            elif not step.rule:  # an invalid return's rule says why it has none
                print_safe(f"     {missing_handoff(step)}")
    return EXIT_OK


def _chain_state(last: ReturnStep) -> str:
    """Where a group's chain stands after its ``last`` step."""
    if last.next_role == END:
        return "ended"
    if last.next_role is not None:
        return f"next: {last.next_role}"
    return "stopped: invalid return" if last.status == INVALID_RETURN else "stopped: no route"


async def _show_sessions(orch: AgentOrchestrator, *, as_json: bool) -> int:
    sessions = await orch.return_sessions()
    if as_json:
        print_json(
            {
                "sessions": [
                    {
                        "artifacts_session": s.artifacts_session,
                        "groups": s.groups,
                        "steps": s.steps,
                        "running": s.running,
                        "ended": s.ended,
                        "last_at": s.last_at.isoformat(),
                    }
                    for s in sessions
                ]
            }
        )
        return EXIT_OK
    if not sessions:
        print("no compact returns recorded")
        return EXIT_OK
    for s in sessions:
        state = "ended" if s.ended else f"{s.running} running"
        when = s.last_at.strftime("%Y-%m-%d %H:%M")
        print_safe(
            f"{s.artifacts_session}  {when}  {s.groups} group(s)  {s.steps} step(s)  {state}"
        )
    return EXIT_OK


async def cmd_prompt(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.returns.model import RoleLaunch
    from core.returns.prompt import role_prompt
    from core.returns.schemas import role_of

    role = role_of(args.agent)
    previous_role = role_of(args.previous) if args.previous else None
    paths = _group_paths(args)
    previous = None
    if previous_role is not None:
        previous = (previous_role, paths.relative(paths.handoff_file(previous_role)))
    launch = RoleLaunch(role, paths.session, paths.group, previous=previous)
    text = role_prompt("", launch, paths)  # no task: the sections alone
    if args.json:
        print_json(
            {
                "status": "ok",
                "agent_role": role.value,
                "artifacts_session": paths.session,
                "group_id": paths.group,
                **_file_json(paths, role),
                "previous": (
                    {"agent_role": previous_role.value, **_file_json(paths, previous_role)}
                    if previous_role is not None
                    else None
                ),
                "text": text,
            }
        )
        return EXIT_OK
    print(text, end="")
    return EXIT_OK


async def cmd_clean(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.returns.paths import check_artifact_id
    from core.returns.retention import clean_session

    session = check_artifact_id(args.session, "artifacts session")
    report = await clean_session(orch.store, _repo(args), session)
    if args.json:
        print_json(
            {
                "status": "problems" if report.problems else "ok",
                "artifacts_session": session,
                "folders": [str(folder) for folder in report.folders],
                "steps": report.steps,
                "documents": report.documents,
                "problems": list(report.problems),
            }
        )
        return EXIT_ERROR if report.problems else EXIT_OK
    for folder in report.folders:
        print_safe(f"removed: {folder}")
    for problem in report.problems:
        print_safe(f"left alone: {problem}")
    if report.problems:
        print("nothing forgotten: clean again once the folders above can be removed")
        return EXIT_ERROR
    if not report.removed_anything:
        print_safe(f"nothing to clean for artifacts session {session}")
        return EXIT_OK
    print_safe(
        f"artifacts session {session} cleaned: {len(report.folders)} folder(s),"
        f" {report.steps} step(s), {report.documents} document(s)"
    )
    return EXIT_OK
