"""``delegate store backup PATH`` and ``delegate store restore PATH``: the store file, safely.

They work on the file itself, not through an open store: a restore must work
when the store cannot be opened (damaged, or replaced under a running process).
See :mod:`core.store_files` and docs/cli.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.data_folder import DB_FILENAME
from tui.cli.output import EXIT_OK


def add_parser(subparsers: Any) -> None:
    store = subparsers.add_parser(
        "store",
        help="back up or restore the store file safely (SQLite's backup API)",
        description="Copy the store while delegate runs, or put a backup back in; never "
        "cp or mv over the store of a running delegate (its write-ahead log belongs to the "
        "file that was there).",
    )
    ssub = store.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    backup = ssub.add_parser(
        "backup",
        help="a consistent copy of the store into a new file (writers go on meanwhile)",
    )
    backup.add_argument("path", type=Path, metavar="PATH", help="the new backup file")
    backup.add_argument("--json", action="store_true", help="print JSON")
    backup.set_defaults(store_handler=cmd_store_backup)
    restore = ssub.add_parser(
        "restore",
        help="check a backup, then make it the store (running delegates see it at once)",
    )
    restore.add_argument("path", type=Path, metavar="PATH", help="the backup file")
    restore.add_argument("--json", action="store_true", help="print JSON")
    restore.set_defaults(store_handler=cmd_store_restore)


def _say(copy: Any, args: argparse.Namespace, text: str) -> int:
    if args.json:
        print(json.dumps({"status": "ok", **copy.to_json()}))
    else:
        print(text)
    return EXIT_OK


def cmd_store_backup(data_dir: Path, args: argparse.Namespace) -> int:
    from core.store_files import backup_store

    copy = backup_store(data_dir / DB_FILENAME, args.path)
    return _say(
        copy,
        args,
        f"backed up {copy.source} to {copy.target}: {copy.sessions} sessions, "
        f"schema {copy.schema_version}, {copy.size:,} bytes (checked)",
    )


def cmd_store_restore(data_dir: Path, args: argparse.Namespace) -> int:
    from core.store_files import restore_store

    copy = restore_store(data_dir / DB_FILENAME, args.path)
    return _say(
        copy,
        args,
        f"restored {copy.source} into {copy.target} ({copy.how}): {copy.sessions} sessions, "
        f"schema {copy.schema_version} (checked first)",
    )
