"""The ``delegate`` command line: tools for scripts, tables for people.

Kept light on imports: ``delegate sessions list --json`` must start fast, so
Rich, Textual, tiktoken and gitpython load only on the paths that use them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from core.data_folder import DB_FILENAME, resolve_data_dir
from core.errors import DelegateError, DiskFull, InternalError, InvalidRequest, StoreError
from core.models import HandoffOutcome, SessionScope, SessionSort
from core.redact import redact, redact_data
from core.redact_stream import TerminalStream

if TYPE_CHECKING:
    from core.orchestrator import AgentOrchestrator
    from core.returns.model import RoleLaunch
    from tui.first_page import FirstPage

EXIT_OK, EXIT_ERROR = 0, 1
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer its reader left
PLAIN_HELP = "tab-separated rows with full ids (the layout used when piped)"


# C1 controls survive ``json.dumps`` (it escapes only C0); some terminals act on them.
_C1 = re.compile("[\x80-\x9f]")


def _print_json(payload: Any) -> None:
    text = json.dumps(redact_data(payload), ensure_ascii=False, indent=None)
    sys.stdout.write(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def _read_arg(value: str, what: str = "request") -> str:
    """``-`` means: read the value from standard input, as strict UTF-8.

    Bytes, not text: the terminal's locale must not decide what a request says,
    and undecodable input is the caller's mistake (``invalid_request``), not a crash.
    A UTF-8 byte-order mark is accepted; a UTF-16 one is not UTF-8.
    """
    if value != "-":
        return value
    data = sys.stdin.buffer.read()
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        raise InvalidRequest(f"{what} on stdin is UTF-16 (byte-order mark); send UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1]
        raise InvalidRequest(
            f"{what} on stdin is not valid UTF-8 (byte {exc.start} is {bad!r})"
        ) from None


def _print_safe(line: str) -> None:
    """Print text that came from disk or an agent (file names, reasons): escaped, redacted."""
    from tui.safe_text import visible

    print(visible(redact(line)))


# --- commands ------------------------------------------------------------


async def cmd_tool(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.tools import call_tool, is_error

    response = await call_tool(orch, args.name, _read_arg(args.request))
    _print_json(response)
    sys.stdout.flush()
    return EXIT_ERROR if is_error(response) else EXIT_OK


async def cmd_sessions_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    scope = SessionScope(top_level=False, archived=args.archived, sort=SessionSort(args.sort))
    page = await orch.list_sessions(args.limit, args.cursor, scope=scope)
    if args.json:
        _print_json(page.model_dump(mode="json"))
        return EXIT_OK
    from tui import render

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
        _print_json({"session": session.model_dump(mode="json"), **page.model_dump(mode="json")})
        return EXIT_OK
    from tui import render

    render.session_detail(
        render.make_console(), session, page, orch.clock(), newest=args.cursor is None
    )
    return EXIT_OK


STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


async def cmd_sessions_stop(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    """Stop the run in flight of a session (or a run id), whichever process drives it."""
    from tui.cli_runs import report_stop  # it imports this module: deferred

    return report_stop(await orch.stop_run(args.id), as_json=args.json)


def _capsule_args(args: argparse.Namespace) -> dict[str, Any]:
    """The capsule a launch carries (``--capsule``) and what the person accepted for it."""
    from core.capsules.launch import CapsuleAcceptance

    if args.capsule is None:
        if args.allow_secrets or args.accept_stale:
            raise InvalidRequest("--allow-secrets and --accept-stale apply with --capsule")
        return {}
    return {
        "capsule": args.capsule,
        "accept": CapsuleAcceptance(
            allow_secrets=args.allow_secrets, accept_stale=args.accept_stale
        ),
    }


async def _role_launch(orch: AgentOrchestrator, args: argparse.Namespace) -> RoleLaunch | None:
    """The role a launch runs as (``--role``), or None; checked before anything starts."""
    if args.role is None:
        if args.group is not None or args.artifacts_session is not None or args.chain:
            raise InvalidRequest("--group, --artifacts-session and --chain apply with --role")
        return None
    if args.session is not None:
        raise InvalidRequest("--role applies to launches only, not to a follow-up (--session)")
    if args.group is None:
        raise InvalidRequest("--role needs --group: the task group the role works on")
    if args.chain and args.detached:
        raise InvalidRequest("--chain runs the chain in this process; it cannot be --detached")
    from tui.cli_returns import role_launch

    return await role_launch(orch, args.role, args.group, args.artifacts_session, args.parent)


async def cmd_run_detached(
    orch: AgentOrchestrator, args: argparse.Namespace, launch: RoleLaunch | None = None
) -> int:
    """Hand one launch or follow-up to a worker process of its own and return at once.

    Prints the run id and conversation id (``--json``: the tool's answer). The
    run does not depend on this process: Ctrl+C here, or closing the terminal,
    changes nothing about it (``delegate sessions stop`` stops it).
    """
    from core.tools import run_payload

    [handle] = await orch.delegate(
        prompt=_read_arg(args.prompt),
        agent_id=args.agent,
        conversation_id=args.session,
        cwd=args.cwd,
        mode="detached",
        parent_id=args.parent,
        **_capsule_args(args),
        roles=[launch] if launch is not None else None,
    )
    if launch is not None:
        from tui.cli_returns import report_role_run

        return await report_role_run(orch, handle, launch, None, as_json=args.json)
    if args.json:
        _print_json({"status": "ok", **run_payload(handle, None)})
    else:
        kind = "follow-up" if args.session else "launch"
        print(f"detached {kind} run {handle.run_id} in conversation {handle.conversation_id}")
    return EXIT_OK


async def cmd_run(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    """Run one launch or follow-up, streaming its reply (``--detached``: in the background).

    SIGINT, SIGTERM and SIGHUP cancel the run at once: the agent's process
    group is stopped, the partial reply kept, the run stored ``cancelled``,
    and the exit code is 128 + the signal's number (130 for Ctrl+C).
    """
    launch = await _role_launch(orch, args)
    if launch is not None and args.chain:
        from tui.cli_returns import run_chain

        return await run_chain(orch, args, _read_arg(args.prompt))
    from tui.cli_capsule import offer_capsule  # it imports this module: deferred

    await offer_capsule(orch, args)
    if args.detached:
        return await cmd_run_detached(orch, args, launch)
    import signal

    from core.runners import RunFailed, TextDelta
    from tui.safe_text import visible

    loop = asyncio.get_running_loop()
    caller = asyncio.current_task()
    caught: list[int] = []
    handles: list[Any] = []

    def stop(signum: int) -> None:
        caught.append(signum)
        if handles:
            handles[0].cancel()
        elif caller is not None and len(caught) == 1:
            caller.cancel()  # still launching: delegate() closes what it started

    installed = []
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:  # pragma: no cover - not POSIX
            continue
        loop.add_signal_handler(sig, stop, int(sig))
        installed.append(sig)
    try:
        try:
            handles += await orch.delegate(
                prompt=_read_arg(args.prompt),
                agent_id=args.agent,
                conversation_id=args.session,
                cwd=args.cwd,
                parent_id=args.parent,
                **_capsule_args(args),
                roles=[launch] if launch is not None else None,
            )
        except asyncio.CancelledError:
            if caught:
                return 128 + caught[0]
            raise
        handle = handles[0]
        err = sys.stderr
        kind = "follow-up" if args.session else "launch"
        print(f"{kind} run {handle.run_id} in conversation {handle.conversation_id}", file=err)
        if args.capsule is not None:
            carried = await orch.get_run(handle.run_id)
            print(f"capsule {carried.capsule_id} injected into its first prompt", file=err)
        if handle.routed_from is not None:
            print(
                f"session {handle.routed_from} handed off: its work continues in"
                f" {handle.conversation_id}",
                file=err,
            )
        if launch is not None:
            print(
                f"as {launch.role.value} of group {launch.group_id} in artifacts session"
                f" {launch.artifacts_session}",
                file=err,
            )
        # Word by word, each judged with its line: a secret split across chunks is
        # never printed in halves.
        reply = TerminalStream()
        async for event in handle.stream():
            if args.json:
                continue  # the whole run is printed once it is over
            if isinstance(event, TextDelta):
                if launch is not None:
                    continue  # a role's reply is its compact return, printed once judged
                sys.stdout.write(visible(reply.feed(event.text)))
                sys.stdout.flush()
            elif isinstance(event, RunFailed):
                sys.stdout.write(visible(reply.close()))
                print(f"\nrun failed: {visible(redact(event.error))}", file=err)
        sys.stdout.write(visible(reply.close()))
        run = await handle.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    handoffs = await _judge_context(orch, handle.conversation_id)
    returned = EXIT_OK
    if launch is not None:
        from tui.cli_returns import report_role_run

        returned = await report_role_run(orch, handle, launch, run, as_json=args.json)
    elif args.json:
        from core.tools import run_payload

        extra = {"handoff": handoffs[-1].model_dump(mode="json")} if handoffs else {}
        _print_json({"status": "ok", **run_payload(handle, run), **extra})
    else:
        sys.stdout.write("\n")
    usage = run.usage
    print(
        f"{run.status.value} in {run.duration_s or 0:.2f}s · "
        f"{usage.input_tokens} in / {usage.output_tokens} out tokens",
        file=err,
    )
    if caught:
        return 128 + caught[0]
    return returned if run.status.value == "completed" else EXIT_ERROR


async def _judge_context(orch: AgentOrchestrator, conversation_id: str) -> list[HandoffOutcome]:
    """Hold the turn just run against the context thresholds (no supervisor may be
    running), saying on stderr which levels it crossed and what a hand-off did; the
    hand-offs' outcomes."""
    from core.events import BusEvent, ContextThresholdCrossed, HandoffSettled
    from core.supervisor.context_monitor import default_continuation, evaluate_context
    from tui.formatting import crossing_line, handoff_outcome_line

    outcomes: list[HandoffOutcome] = []

    def say(event: BusEvent) -> None:
        if isinstance(event, ContextThresholdCrossed):
            print(crossing_line(event), file=sys.stderr)
        elif isinstance(event, HandoffSettled) and event.conversation_id == conversation_id:
            outcomes.append(event.outcome)
            print(handoff_outcome_line(event.outcome), file=sys.stderr)

    remove = orch.bus.add_listener(say)
    try:
        await evaluate_context(orch, [conversation_id], continuation=default_continuation(orch))
    finally:
        remove()
    return outcomes


async def cmd_demo(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    if args.clear:
        removed = await orch.clear_demo()
        print(f"removed {removed} demo sessions from {orch.store.path}")
        return EXIT_OK
    from core import demo
    from core.clock import to_us
    from core.tokens import count_tokens

    added = await demo.fill(orch.store, args.sessions, to_us(orch.clock()), count_tokens)
    skipped = args.sessions - added
    note = f" ({skipped} already present)" if skipped else ""
    print(f"added {added} demo sessions to {orch.store.path}{note}")
    return EXIT_OK


async def cmd_history(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    events = await orch.history(args.limit)
    if args.json:
        _print_json([e.model_dump(mode="json") for e in events])
        return EXIT_OK
    from tui import render

    console = render.make_console(plain=args.plain)
    ids = (
        {} if render.is_plain(console) else await orch.short_ids(e.conversation_id for e in events)
    )
    render.history_table(console, events, orch.clock(), ids)
    return EXIT_OK


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
        _print_json(agents)
        return EXIT_OK
    from tui import render

    console = render.make_console()
    render.agents_listing(console, agents)
    if default is None:
        _print_safe(
            "default: none: no agent CLI is installed; install Claude Code or Codex, "
            "or name an agent with --agent"
        )
    else:
        _print_safe(f"default: {default.agent_id} ({default.reason()})")
    return EXIT_OK


async def cmd_import(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    """Index Claude Code and Codex sessions (``--report``: show the last import instead)."""
    if args.report:
        report = await orch.last_import_report()
        if report is None:
            print("no import yet: run `delegate import`", file=sys.stderr)
            return EXIT_ERROR
    elif args.json:
        report = await orch.import_sources(args.claude_dir, args.codex_dir)
    else:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        with Progress(
            TextColumn("importing"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[sessions]} sessions"),
            transient=True,
        ) as bar:
            task = bar.add_task("import", total=None, sessions=0)

            def show(p: Any) -> None:
                bar.update(
                    task,
                    total=p.bytes_total or None,
                    completed=p.bytes_done,
                    sessions=max(p.sessions_listed, p.sessions_added + p.sessions_updated),
                )

            report = await orch.import_sources(args.claude_dir, args.codex_dir, show)
    if args.json:
        _print_json(report.model_dump(mode="json"))
        return EXIT_OK
    print(
        f"{report.files_seen} files: {report.files_read} read, "
        f"{report.files_skipped_unchanged} unchanged · {report.sessions_added} sessions added, "
        f"{report.sessions_updated} updated · {report.bytes_read / 1e6:.1f} MB in "
        f"{report.duration_s:.2f}s"
    )
    if report.listing_s is not None:
        print(
            f"every new session listed in {report.listing_s:.2f}s from its file's first and"
            " last lines, then each file read in full"
        )
    if report.malformed_lines + report.oversized_lines:
        print(
            f"damaged lines skipped: {report.malformed_lines} malformed, "
            f"{report.oversized_lines} oversized"
        )
    if report.unknown_line and not args.report:
        # Not damage: a line type this version of delegate does not know yet.
        _print_safe(report.unknown_line.replace("`", ""))
    for item in report.unreadable:
        _print_safe(f"unreadable: {item.path}: {item.reason}")
    if args.report:
        for entry in report.skipped:
            _print_safe(f"skipped ({entry.kind}): {entry.path}: {entry.reason}")
    if args.report:
        for t in report.unknown_types:
            version = f"version {t.version}" if t.version else "version not recorded"
            _print_safe(f"unknown line type {t.type!r} ({t.source} {version}): {t.lines} lines")
        for f in report.files_with_skips:
            note = f" error: {f.error}" if f.error else ""
            _print_safe(
                f"{f.path}: {f.malformed_lines} malformed, {f.unknown_lines} unknown, "
                f"{f.oversized_lines} oversized{note}"
            )
    elif report.problem_line:
        _print_safe(report.problem_line.replace("`", ""))
    return EXIT_OK


# --- parser --------------------------------------------------------------


def _limit(value: str) -> int:
    # Range errors are the orchestrator's to report (invalid_request naming the field).
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="data folder (default: $DELEGATE_HOME, else the user data folder)",
    )
    parser.add_argument(
        "--all",
        dest="all_projects",
        action="store_true",
        help="the panel lists every project (default: the git project it starts in)",
    )


class _NotThePanel(Exception):
    """The command line is more than the panel's options: the full parser reads it."""


class _PanelParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotThePanel(message)


def _panel_args(argv: Sequence[str] | None) -> argparse.Namespace | None:
    """The arguments of a start with no command (the panel), or None for anything else.

    Only the global options are read, so the panel's start neither builds the
    commands' parsers nor imports their modules. Anything else (a command, ``-h``,
    an option error) is left to :func:`build_parser`, which reads it the same way.
    """
    parser = _PanelParser(prog="delegate", add_help=False)
    _global_options(parser)
    try:
        args, rest = parser.parse_known_args(argv)
    except _NotThePanel:
        return None
    if rest:
        return None
    args.command = None  # as the full parser's COMMAND, when none is given
    return args


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="delegate",
        description="Terminal session manager for coding-agent delegates. "
        "With no command, opens the session picker.",
    )
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    tool = sub.add_parser("tool", help="call a JSON tool: delegate_sessions or delegate_agent")
    tool.add_argument("name", choices=["delegate_sessions", "delegate_agent"])
    tool.add_argument("request", help="request JSON, or - to read it from stdin")
    tool.set_defaults(handler=cmd_tool)

    sessions = sub.add_parser(
        "sessions", help="list, show, search, dismiss or stop reusable sessions"
    )
    ssub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    s_list = ssub.add_parser("list", help="reusable sessions, newest first")
    s_list.add_argument("--limit", type=_limit, default=20, help="page size, 1..100 (20)")
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
    s_show.add_argument("--last", type=_limit, default=10, help="messages to show (10)")
    s_show.add_argument("--cursor", help="next_cursor to page back to older messages")
    s_show.add_argument("--json", action="store_true")
    s_show.set_defaults(handler=cmd_sessions_show)
    from tui import cli_archive

    cli_archive.add_parser(ssub)

    s_stop = ssub.add_parser(
        "stop", help="stop a session's run in flight, whichever process on this host drives it"
    )
    s_stop.add_argument("id", metavar="ID", help="conversation id or run id")
    s_stop.add_argument("--json", action="store_true")
    s_stop.set_defaults(handler=cmd_sessions_stop)

    from tui import cli_search

    cli_search.add_parser(ssub)

    from tui import cli_runs  # deferred: it builds on this module

    cli_runs.add_parser(sub)

    from tui import cli_context  # deferred: it builds on this module

    cli_context.add_parser(sub)

    run = sub.add_parser("run", help="launch a delegate, or follow up with --session")
    run.add_argument("prompt", help="the prompt, or - to read it from stdin")
    run.add_argument("--agent", help="agent id (default: the session's, else the default)")
    run.add_argument("--session", metavar="ID", help="follow up on this conversation")
    run.add_argument("--cwd", help="working directory of a new delegate (default: here)")
    run.add_argument(
        "--parent",
        metavar="ID",
        help="launch a sub-agent of this session: its own window, the parent's system and"
        " context messages shared once",
    )
    run.add_argument(
        "--capsule",
        metavar="PATH|latest",
        help="inject this context capsule into the first prompt (latest: the newest of the"
        " branch); refused over budget, with secrets or stale unless accepted below",
    )
    run.add_argument(
        "--allow-secrets",
        action="store_true",
        help="launch with a capsule that holds what looks like a secret",
    )
    run.add_argument(
        "--accept-stale",
        action="store_true",
        help="launch with a capsule whose referenced files changed since it was written",
    )
    run.add_argument(
        "--role",
        metavar="ROLE",
        help="compact returns: run as this role of a group (developer, qa_expert, tech_lead,"
        " ...): it writes a hand-off file and answers a status and three lines, printed as"
        " its display line instead of its reply (docs/returns.md)",
    )
    run.add_argument("--group", metavar="G", help="with --role: the task group it works on")
    run.add_argument(
        "--artifacts-session",
        metavar="S",
        help="with --role: the artifacts session (default: --parent's id, else a new one)",
    )
    run.add_argument(
        "--chain",
        action="store_true",
        help="with --role: launch the next role each return routes to, until the end or a"
        " stop; one display line per step",
    )
    run.add_argument(
        "--detached",
        action="store_true",
        help="run in a background process of its own and print its ids at once",
    )
    run.add_argument(
        "--json", action="store_true", help="print the run (or its ids, detached) as JSON"
    )
    run.set_defaults(handler=cmd_run, owner_kind="run")

    demo = sub.add_parser("demo", help="fill the store with deterministic demo sessions")
    demo.add_argument("--sessions", type=int, default=50, help="how many (50)")
    demo.add_argument("--clear", action="store_true", help="remove the demo sessions instead")
    demo.set_defaults(handler=cmd_demo)

    history = sub.add_parser("history", help="launches, follow-ups and dismissals")
    history.add_argument("--limit", type=_limit, default=20)
    history.add_argument("--json", action="store_true")
    history.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    history.set_defaults(handler=cmd_history)

    agents = sub.add_parser("agents", help="configured agents")
    agents.add_argument("--json", action="store_true")
    agents.set_defaults(handler=cmd_agents)

    imp = sub.add_parser("import", help="index Claude Code and Codex sessions (incremental)")
    imp.add_argument(
        "--claude-dir", type=Path, metavar="DIR", help="default: $CLAUDE_CONFIG_DIR or ~/.claude"
    )
    imp.add_argument(
        "--codex-dir", type=Path, metavar="DIR", help="default: $CODEX_HOME or ~/.codex"
    )
    imp.add_argument("--json", action="store_true", help="print the report as JSON")
    imp.add_argument(
        "--report", action="store_true", help="show the last import's report (files with skips)"
    )
    imp.set_defaults(handler=cmd_import)

    from tui import cli_watch

    cli_watch.add_parser(sub)

    from tui import cli_handoff  # deferred: it builds on this module

    cli_handoff.add_parser(sub)

    from tui import cli_checkpoints

    cli_checkpoints.add_parser(sub)

    from tui import cli_hooks

    cli_hooks.add_parser(sub)

    from tui import cli_open

    cli_open.add_parser(sub)

    from tui import cli_capsule

    cli_capsule.add_parser(sub)

    from tui import cli_returns  # deferred: it builds on this module

    cli_returns.add_parser(sub)

    from tui import cli_store

    cli_store.add_parser(sub)

    sub.add_parser(
        "mcp", help="serve delegate_sessions and delegate_agent over MCP (stdio)"
    )  # no handler: runs its own event loop (see main)
    return parser


async def _run_command(
    data_dir: Path,
    handler: Callable[[AgentOrchestrator, argparse.Namespace], Awaitable[int]],
    args: argparse.Namespace,
) -> int:
    from core.orchestrator import AgentOrchestrator  # the commands' only: not for --help

    orch = await AgentOrchestrator.open(data_dir, owner_kind=getattr(args, "owner_kind", "other"))
    try:
        return await handler(orch, args)
    finally:
        await orch.close()


def run_app(
    data_dir: Path, *, all_projects: bool = False, first_page: FirstPage | None = None
) -> int:
    """Open the session picker (the Textual app) over ``data_dir``.

    Settings (and the keymap's binding ids) are checked before the App exists,
    so a broken ``config.toml`` is one line and exit 1, never a traceback.
    ``first_page``: where the panel keeps its first page for the next start (drawn
    already, this time, if it was current); the app takes the terminal from it.
    """
    import gc

    from core.config import load_settings
    from tui.keymap_check import check_keymap

    # Paused from Textual's import until the picker is on screen (the app turns it back
    # on): what the start builds lives as long as the app (see tui.start.collector_paused),
    # and the young collections its first frame triggers would only delay the rows.
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            from tui.app import create_app

            settings = load_settings(data_dir)
            check_keymap(settings.keymap)
            _check_store(data_dir / DB_FILENAME)
            app = create_app(
                data_dir,
                import_sources=(None, None),
                settings=settings,
                scope_cwd=Path.cwd(),
                all_projects=all_projects,
                resume_collector=collecting,
                first_page=first_page,
            )
        except BaseException:
            if first_page is not None:
                first_page.close()  # the error is then printed where the shell will show it
            raise
        if first_page is not None:
            first_page.hand_over()
        app.run()
    finally:
        if collecting:
            gc.enable()
    return app.return_code or EXIT_OK


def _check_store(path: Path) -> None:
    """Refuse, before the App exists, a store this delegate cannot open.

    Read-only and without touching the file: the App opens it for real later.
    """
    import sqlite3

    from core.data_folder import connect_read_only
    from core.migrations import SCHEMA_VERSION

    if not path.exists():
        return
    try:
        db = connect_read_only(path)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error as exc:
        from core.atomic_files import sqlite_disk_full

        if sqlite_disk_full(exc, path.parent):  # no room for its -shm: not a damaged file
            raise DiskFull(str(path.parent), f"the store {path.name} cannot open") from None
        raise StoreError(
            f"{path} cannot be read ({exc}); move it aside, or restore a backup with "
            "`delegate store restore BACKUP`"
        ) from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this delegate "
            f"({SCHEMA_VERSION}); upgrade delegate"
        )


def _error_line(exc: DelegateError) -> str:
    """``delegate: code: message`` as one line a terminal shows as text."""
    from tui.safe_text import visible

    message = " ".join(visible(redact(exc.message)).split("\n"))
    return f"delegate: {exc.code}: {message}"


def _report(exc: DelegateError, args: argparse.Namespace | None) -> int:
    if args is not None and (getattr(args, "json", False) or args.command == "tool"):
        _print_json(exc.to_payload())
    else:
        print(_error_line(exc), file=sys.stderr)
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None, *, first_page: FirstPage | None = None) -> int:
    """The command line; ``first_page`` is the panel's, when the entry point prepared it."""
    args = _panel_args(argv)
    if args is None:
        args = build_parser().parse_args(argv)
    try:
        return _dispatch(args, first_page)
    except DelegateError as exc:
        return _report(exc, args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader closed the pipe (``| head``): its choice, not an error. Later writes
        # (the interpreter's final flush) go nowhere; the exit status is a shell's SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # the boundary: one line, never a traceback
        return _report(InternalError(exc), args)


def _dispatch(args: argparse.Namespace, first_page: FirstPage | None = None) -> int:
    handler = getattr(args, "handler", None)
    if args.command == "hook":  # an agent waits for it: its own budget, never an error
        from tui.cli_hooks import run_hook

        return run_hook(args)
    data_dir = resolve_data_dir(args.data_dir)
    if args.command == "mcp":
        from core.mcp_server import main as serve_mcp

        return serve_mcp(data_dir)
    store_handler = getattr(args, "store_handler", None)
    if store_handler is not None:  # the file itself: no store is opened
        return int(store_handler(data_dir, args))
    if handler is None:
        return run_app(data_dir, all_projects=args.all_projects, first_page=first_page)
    return asyncio.run(_run_command(data_dir, handler, args))


if __name__ == "__main__":
    sys.exit(main())
