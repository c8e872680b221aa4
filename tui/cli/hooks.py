"""``delegate hooks install|uninstall|status AGENT`` and ``delegate hook AGENT EVENT``.

The first puts delegate's hooks into Claude Code's ``settings.json`` (or Codex's
``notify``) and takes them out again; the second is what those hooks run: it
reads the agent's JSON (stdin for Claude Code, the last argument for Codex) and
prints the hook's answer. See docs/hooks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from core import ids
from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_OK

AGENTS = (ids.CLAUDE_CODE, ids.CODEX)


def add_parser(subparsers: Any) -> None:
    """``delegate hooks ...`` (a person's) and ``delegate hook ...`` (the agents')."""
    hooks = subparsers.add_parser(
        "hooks",
        help="install delegate's hooks into Claude Code or Codex (thresholds, hand-offs)",
        description="Add delegate's hooks to an agent CLI's own settings, remove them "
        "(what was there comes back exactly), or show whether they are installed.",
    )
    hsub = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    for action, handler, help_text in (
        ("install", cmd_hooks_install, "add delegate's hooks (never replacing yours)"),
        ("uninstall", cmd_hooks_uninstall, "remove delegate's hooks; restore what was there"),
        ("status", cmd_hooks_status, "whether delegate's hooks are installed"),
    ):
        p = hsub.add_parser(action, help=help_text)
        p.add_argument("agent", choices=AGENTS)
        p.add_argument(
            "--agent-dir",
            type=Path,
            metavar="DIR",
            help="the agent's folder (default: $CLAUDE_CONFIG_DIR or ~/.claude; "
            "$CODEX_HOME or ~/.codex)",
        )
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(handler=handler)

    hook = subparsers.add_parser(
        "hook",
        help="(run by the agents' hooks) handle one hook event",
        description="What delegate's installed hooks run: Claude Code passes its JSON on "
        "stdin; Codex's notify passes it as the last argument.",
    )
    hook.add_argument("agent", choices=AGENTS)
    hook.add_argument(
        "event", help="the hook event (SessionStart, UserPromptSubmit, Stop; notify for Codex)"
    )
    hook.add_argument("payload", nargs="?", help="the event's JSON (Codex); default: stdin")
    hook.set_defaults(handler=None)


def _data_dir(orch: AgentOrchestrator) -> Path:
    return orch.data_dir


def _print_status(status: Any, args: argparse.Namespace, done: str) -> None:
    if args.json:
        print(json.dumps(status.to_json(), indent=2))
        return
    if status.installed:
        print(f"{done}: delegate's {args.agent} hooks ({', '.join(status.events)}) are in")
    elif status.events:
        print(
            f"{done}: delegate's {args.agent} hooks are partly in ({', '.join(status.events)});"
            f" missing: {', '.join(status.missing)} (install again)"
        )
    else:
        print(f"{done}: delegate's {args.agent} hooks are not in")
    print(f"  {status.settings}")
    if status.note:
        print(f"  {status.note}")


async def cmd_hooks_install(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.hooks.install import install, settings_path

    path = settings_path(args.agent, args.agent_dir)
    status = await asyncio.to_thread(install, args.agent, path, _data_dir(orch))
    _print_status(status, args, "Installed" if status.changed else "Already installed")
    return EXIT_OK


async def cmd_hooks_uninstall(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.hooks.install import settings_path, uninstall

    path = settings_path(args.agent, args.agent_dir)
    status = await asyncio.to_thread(uninstall, args.agent, path, _data_dir(orch))
    _print_status(status, args, "Uninstalled" if status.changed else "Nothing to uninstall")
    return EXIT_OK


async def cmd_hooks_status(orch: AgentOrchestrator, args: argparse.Namespace) -> int:
    from core.hooks.install import settings_path, status_of

    path = settings_path(args.agent, args.agent_dir)
    status = await asyncio.to_thread(status_of, args.agent, path)
    _print_status(status, args, "Status")
    return EXIT_OK


def run_hook(args: argparse.Namespace) -> int:
    """``delegate hook AGENT EVENT``: answered within the hook budget, always exit 0.

    Never opens the store before it has a thread and a deadline of its own
    (:mod:`core.hooks.entry`); when the budget is spent the answer ("go on") is
    printed and the process ends at once, leaving its unfinished work to the queue.
    """
    from core.data_folder import resolve_data_dir
    from core.hooks.entry import answer_hook
    from core.hooks.payload import read_bounded

    try:
        data_dir = resolve_data_dir(args.data_dir)
    except Exception as exc:  # no data folder to log in: a line on stderr, the agent goes on
        print(
            f"delegate: hook: no data folder ({type(exc).__name__}); let through", file=sys.stderr
        )
        return EXIT_OK
    payload: str | None = args.payload

    def read_input() -> bytes:
        if payload is not None:
            return os.fsencode(payload)  # Codex's argument, its bytes as given
        return read_bounded(sys.stdin.buffer)

    answer = answer_hook(data_dir, args.agent, args.event, read_input)
    try:
        sys.stdout.write(answer.stdout)
        sys.stdout.flush()
    except OSError:  # the agent stopped reading: it goes on anyway
        pass
    if not answer.finished:
        sys.stderr.flush()
        os._exit(0)  # the work's thread may wait on a lock: the answer must not
    return answer.exit_code
