"""``delegate import``: Claude Code and Codex sessions indexed (incrementally), with a
progress bar, and what the last import skipped (``--report``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.orchestrator import AgentOrchestrator
from tui.cli.output import EXIT_ERROR, EXIT_OK, print_json, print_safe


def add_parser(subparsers: Any) -> None:
    """``delegate import [--claude-dir DIR] [--codex-dir DIR] [--json] [--report]``."""
    imp = subparsers.add_parser("import", help="index Claude Code and Codex sessions (incremental)")
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
        print_json(report.model_dump(mode="json"))
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
        print_safe(report.unknown_line.replace("`", ""))
    for item in report.unreadable:
        print_safe(f"unreadable: {item.path}: {item.reason}")
    if args.report:
        for entry in report.skipped:
            print_safe(f"skipped ({entry.kind}): {entry.path}: {entry.reason}")
    if args.report:
        for t in report.unknown_types:
            version = f"version {t.version}" if t.version else "version not recorded"
            print_safe(f"unknown line type {t.type!r} ({t.source} {version}): {t.lines} lines")
        for f in report.files_with_skips:
            note = f" error: {f.error}" if f.error else ""
            print_safe(
                f"{f.path}: {f.malformed_lines} malformed, {f.unknown_lines} unknown, "
                f"{f.oversized_lines} oversized{note}"
            )
    elif report.problem_line:
        print_safe(report.problem_line.replace("`", ""))
    return EXIT_OK
