"""``delegate run``: one launch or follow-up, streamed here or handed to a worker.

Owns what a run started from the command line decides: the capsule and role it
carries, the signals that stop it (128 + the signal's number), what it prints while
it streams and once it is over, and the context levels its turn crossed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from core.errors import InvalidRequest
from core.models import HandoffOutcome
from core.orchestrator import AgentOrchestrator
from core.redact import redact
from core.redact_stream import TerminalStream
from core.returns.model import RoleLaunch
from tui.cli.arguments import read_arg
from tui.cli.capsule import offer_capsule
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json
from tui.cli.roles import report_role_run, role_launch, run_chain


def add_parser(subparsers: Any) -> None:
    """``delegate run PROMPT [--session ID] [--role R --group G [--chain]] [--detached]``."""
    run = subparsers.add_parser("run", help="launch a delegate, or follow up with --session")
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


STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


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
        prompt=read_arg(args.prompt),
        agent_id=args.agent,
        conversation_id=args.session,
        cwd=args.cwd,
        mode="detached",
        parent_id=args.parent,
        **_capsule_args(args),
        roles=[launch] if launch is not None else None,
    )
    if launch is not None:
        return await report_role_run(orch, handle, launch, None, as_json=args.json)
    if args.json:
        print_json({"status": "ok", **run_payload(handle, None)})
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
        return await run_chain(orch, args, launch, read_arg(args.prompt))
    await offer_capsule(orch, args)
    if args.detached:
        return await cmd_run_detached(orch, args, launch)
    import signal

    from core.runners import RunFailed, TextDelta
    from tui.shared.safe_text import visible

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
                prompt=read_arg(args.prompt),
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
        returned = await report_role_run(orch, handle, launch, run, as_json=args.json)
    elif args.json:
        from core.tools import run_payload

        extra = {"handoff": handoffs[-1].model_dump(mode="json")} if handoffs else {}
        print_json({"status": "ok", **run_payload(handle, run), **extra})
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
    from tui.shared.formatting import crossing_line, handoff_outcome_line

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
