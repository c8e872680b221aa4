"""``delegate capsule remember|inbox|prune``: the repository's capsule inbox (reminders
waiting to go into a capsule) and old capsules deleted with their rows.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from core.errors import InvalidRequest
from core.orchestrator import AgentOrchestrator
from tui.cli.capsule_shared import capsule_file, jsonable, repo_of
from tui.cli.output import EXIT_OK, print_json, print_safe


async def cmd_remember(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.inbox import remember

    entry = await asyncio.to_thread(
        remember,
        repo_of(args),
        args.reminder,
        topic=args.topic,
        next_step=args.next_step,
        tags=tuple(args.tag),
        now=orch.clock(),
    )
    if args.json:
        print_json({"status": "ok", "entry": jsonable(entry)})
        return EXIT_OK
    print_safe(f"remembered: {_entry_line(entry)}")
    return EXIT_OK


def _entry_line(entry: Any) -> str:
    data = jsonable(entry)
    tags = " ".join(f"#{t}" for t in data.get("tags", ()))
    topic = f"[{data['topic']}] " if data.get("topic") else ""
    step = f" -> {data['next_step']}" if data.get("next_step") else ""
    consumed = f"  (consumed into {data['consumed_into']})" if data.get("consumed_into") else ""
    return f"{data.get('entry_id', '')}  {topic}{data.get('reminder', '')}{step} {tags}{consumed}"


async def cmd_inbox(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.inbox import consume, inbox_entries

    repo = repo_of(args)
    consumed_into: Path | None = None
    if args.consume:
        if not args.into:
            raise InvalidRequest("--consume needs --into PATH|latest: the capsule they went into")
        consumed_into, _ = await capsule_file(repo, args.into, args.branch)
        await asyncio.to_thread(
            consume, repo, list(args.consume), into=consumed_into, now=orch.clock()
        )
    elif args.into:
        raise InvalidRequest("--into goes with --consume ID ...")
    entries = await asyncio.to_thread(inbox_entries, repo, args.all)
    if args.json:
        print_json(
            {
                "status": "ok",
                "consumed_into": str(consumed_into) if consumed_into else None,
                "entries": [jsonable(e) for e in entries],
            }
        )
        return EXIT_OK
    if consumed_into is not None:
        print_safe(f"consumed {len(args.consume)} into {consumed_into}")
    if not entries:
        print("the inbox is empty")
    for entry in entries:
        print_safe(_entry_line(entry))
    return EXIT_OK


async def cmd_prune(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.capsules.pruning import prune_capsules
    from core.capsules.registry import forget_capsules

    removed = await asyncio.to_thread(
        prune_capsules,
        repo_of(args),
        older_than_days=args.older_than,
        merged=args.merged,
        now=orch.clock(),
    )
    # The files are gone: so are their rows (a session keeps the id and digest it used).
    forgotten = await forget_capsules(orch.store, removed)
    if args.json:
        print_json({"status": "ok", "deleted": [str(p) for p in removed], "forgotten": forgotten})
        return EXIT_OK
    for path in removed:
        print_safe(f"deleted: {path}")
    print(f"{len(removed)} capsule(s) deleted")
    return EXIT_OK
