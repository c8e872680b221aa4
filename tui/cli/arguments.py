"""How the command line reads its arguments: the global options, whole numbers, and
``-`` for a value read from standard input.

Shared by the panel's quick start (global options only) and the full parser.
"""

from __future__ import annotations

import argparse
import sys

from core.errors import InvalidRequest

PLAIN_HELP = "tab-separated rows with full ids (the layout used when piped)"


def limit(value: str) -> int:
    """A whole number; range errors are the orchestrator's to report (naming the field)."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None


def global_options(parser: argparse.ArgumentParser) -> None:
    """``--data-dir`` and ``--all``: read before any command."""
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


def read_arg(value: str, what: str = "request") -> str:
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
