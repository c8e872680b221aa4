"""The ``delegate`` command line: tools for scripts, tables for people.

``main`` reads the command line and runs one command; the rest of the package is
one module per command group (``delegate sessions``: :mod:`tui.cli.sessions`, ...),
:mod:`tui.cli.parser` (the full parser), :mod:`tui.cli.output` (printing and exit
codes) and :mod:`tui.cli.arguments` (options every command reads).

Kept light on imports: ``delegate sessions list --json`` must start fast, so
Rich, Textual, tiktoken and gitpython load only on the paths that use them, and the
panel's start (no command) never builds the commands' parser.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from core.data_folder import resolve_data_dir
from core.errors import DelegateError, InternalError
from tui.cli.arguments import global_options
from tui.cli.output import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, report_error

if TYPE_CHECKING:
    from core.orchestrator import AgentOrchestrator
    from tui.first_page import FirstPage


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
    global_options(parser)
    try:
        args, rest = parser.parse_known_args(argv)
    except _NotThePanel:
        return None
    if rest:
        return None
    args.command = None  # as the full parser's COMMAND, when none is given
    return args


def build_parser() -> argparse.ArgumentParser:
    """The full parser (every command's), built on demand."""
    from tui.cli.parser import build_parser as build

    return build()


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
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader closed the pipe (``| head``): its choice, not an error. Later writes
        # (the interpreter's final flush) go nowhere; the exit status is a shell's SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # the boundary: one line, never a traceback
        return _report(InternalError(exc), args)


def _report(exc: DelegateError, args: argparse.Namespace | None) -> int:
    """The error as JSON where the command answers JSON (``--json``, ``tool``), else a line."""
    as_json = args is not None and (getattr(args, "json", False) or args.command == "tool")
    return report_error(exc, as_json=as_json)


def _dispatch(args: argparse.Namespace, first_page: FirstPage | None = None) -> int:
    handler = getattr(args, "handler", None)
    if args.command == "hook":  # an agent waits for it: its own budget, never an error
        from tui.cli.hooks import run_hook

        return run_hook(args)
    data_dir = resolve_data_dir(args.data_dir)
    if args.command == "mcp":
        from core.mcp_server import main as serve_mcp

        return serve_mcp(data_dir)
    store_handler = getattr(args, "store_handler", None)
    if store_handler is not None:  # the file itself: no store is opened
        return int(store_handler(data_dir, args))
    if handler is None:
        from tui.cli.panel import run_app

        return run_app(data_dir, all_projects=args.all_projects, first_page=first_page)
    return asyncio.run(_run_command(data_dir, handler, args))
