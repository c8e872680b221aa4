"""``delegate runs list|show|stop``: the runs of every process, and stopping any of them.

Kept light on imports like the rest of the CLI: Rich loads only for tables.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from core.models import Run, RunStatus
from core.orchestrator import AgentOrchestrator
from core.runs.handle import StopOutcome
from tui.cli.arguments import PLAIN_HELP, limit
from tui.cli.output import EXIT_OK, print_json

# What ``stop`` did, for people (``--json`` prints the ``how`` itself).
STOP_OUTCOMES = {
    "cancelled": "stopped",
    "stopped": "stopped",
    "signalled": "asked its process to stop",
    "requested": "asked its owner to stop it (it does at its next heartbeat)",
    "interrupted": "its process had already ended: marked interrupted",
}


def add_parser(subparsers: Any) -> None:
    """Add ``runs`` and its actions to the ``delegate`` command line."""
    runs = subparsers.add_parser("runs", help="list, show or stop runs of every process")
    rsub = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    r_list = rsub.add_parser("list", help="the latest runs, newest first")
    r_list.add_argument(
        "--status", choices=[s.value for s in RunStatus], help="only runs with this status"
    )
    r_list.add_argument("--limit", type=limit, default=20, help="how many, 1..100 (20)")
    r_list.add_argument("--json", action="store_true")
    r_list.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    r_list.set_defaults(handler=cmd_runs_list)
    r_show = rsub.add_parser("show", help="a run: prompt, output, stderr tail, owner")
    r_show.add_argument("run_id", metavar="RUN", help="run id or a unique prefix (6+)")
    r_show.add_argument("--json", action="store_true")
    r_show.set_defaults(handler=cmd_runs_show)
    r_stop = rsub.add_parser("stop", help="stop a run, whichever process or host drives it")
    r_stop.add_argument("run_id", metavar="RUN", help="run id or a unique prefix (6+)")
    r_stop.add_argument("--json", action="store_true")
    r_stop.set_defaults(handler=cmd_runs_stop)


def duration_s(run: Run, now: datetime) -> float:
    """How long a run took, or has been running so far."""
    end = run.finished_at or now
    return max(0.0, (end - run.started_at).total_seconds())


def run_summary(run: Run, now: datetime) -> dict[str, Any]:
    """A run for ``list --json``: everything but its texts."""
    return {
        "run_id": run.run_id,
        "conversation_id": run.conversation_id,
        "agent_id": run.agent_id,
        "kind": run.kind.value,
        "status": run.status.value,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "duration_s": round(duration_s(run, now), 3),
        "owner_kind": run.owner_kind,
        "cancel_requested": run.cancel_requested,
        "last_output_at": run.last_output_at.isoformat() if run.last_output_at else None,
    }


async def cmd_runs_list(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    status = RunStatus(args.status) if args.status else None
    runs = await orch.list_runs(status, args.limit)
    now = orch.clock()
    if args.json:
        print_json({"runs": [run_summary(r, now) for r in runs]})
        return EXIT_OK
    from tui.cli import render
    from tui.shared import formatting as fmt

    console = render.make_console(plain=args.plain)
    header = ("run", "status", "agent", "session", "age", "duration")
    plain = render.is_plain(console)
    # Full ids when piped (scripts), the short ones a person types otherwise.
    rows = [
        (
            r.run_id if plain else fmt.short_id(r.run_id),
            r.status.value,
            render.shown(r.agent_id),
            r.conversation_id if plain else fmt.short_id(r.conversation_id),
            fmt.ago(r.started_at, now),
            f"{duration_s(r, now):.1f}s",
        )
        for r in runs
    ]
    if plain:
        for row in (header, *rows):
            console.file.write("\t".join(cell.replace("\t", " ") for cell in row) + "\n")
        return EXIT_OK
    if not rows:
        console.print("no runs" + (f" with status {args.status}" if args.status else ""))
        return EXIT_OK
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in header:
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return EXIT_OK


async def cmd_runs_show(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    run = await orch.get_run(args.run_id)
    now = orch.clock()
    if args.json:
        print_json({"run": {**run.model_dump(mode="json"), "duration_s": duration_s(run, now)}})
        return EXIT_OK
    from tui.cli import render
    from tui.shared import formatting as fmt

    lines = [
        f"run {run.run_id} ({run.kind.value}) of {run.conversation_id}",
        f"agent {run.agent_id} · {run.status.value} · started {fmt.ago(run.started_at, now)}"
        f" · {duration_s(run, now):.1f}s",
        f"owner {run.owner_kind} · pid {run.owner_pid} on {run.owner_host}"
        + (f" · last heartbeat {fmt.ago(run.heartbeat_at, now)}" if run.heartbeat_at else "")
        + (" · stop requested" if run.cancel_requested else ""),
    ]
    if run.capsule_id:
        lines.append(f"capsule {run.capsule_id} · digest {run.capsule_digest}")
    if run.error:
        lines.append(f"error: {run.error}")
    lines += ["", "prompt:", run.prompt]
    output = run.output if run.finished_at is not None else (run.live_output or "")
    lines += ["", "output:" if run.finished_at is not None else "output so far:", output]
    stderr = run.stderr_tail or run.stderr
    if stderr:
        lines += ["", "stderr (last lines):", *stderr.splitlines()[-20:]]
    for line in lines:
        print(render.shown(line))
    return EXIT_OK


async def cmd_runs_stop(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    run = await orch.get_run(args.run_id)
    return report_stop(await orch.stop_run(run.run_id), as_json=args.json)


def report_stop(outcome: StopOutcome, *, as_json: bool) -> int:
    """What a stop did, as the tool's JSON or one line (``runs stop``, ``sessions stop``)."""
    if as_json:
        print_json(
            {
                "status": "ok",
                "run_id": outcome.run_id,
                "conversation_id": outcome.conversation_id,
                "how": outcome.how,
            }
        )
        return EXIT_OK
    print(f"run {outcome.run_id} of {outcome.conversation_id}: {STOP_OUTCOMES[outcome.how]}")
    return EXIT_OK
    print(f"run {outcome.run_id} of {outcome.conversation_id}: {STOP_OUTCOMES[outcome.how]}")
    return EXIT_OK
