"""What the command line prints and how it exits: JSON for scripts, escaped text for
people, one error line, and the exit codes every command returns.

Everything printed here is redacted first; text that came from disk or an agent is
shown with its control characters spelled out, so it cannot act on the terminal.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from core.errors import DelegateError
from core.redact import redact, redact_data

EXIT_OK, EXIT_ERROR = 0, 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl+C while a command starts
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer its reader left

# C1 controls survive ``json.dumps`` (it escapes only C0); some terminals act on them.
_C1 = re.compile("[\x80-\x9f]")


def print_json(payload: Any) -> None:
    """One line of JSON on stdout: redacted, C1 controls escaped."""
    text = json.dumps(redact_data(payload), ensure_ascii=False, indent=None)
    sys.stdout.write(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def print_safe(line: str) -> None:
    """Print text that came from disk or an agent (file names, reasons): escaped, redacted."""
    from tui.shared.safe_text import visible

    print(visible(redact(line)))


def print_err(line: str) -> None:
    """:func:`print_safe`, on stderr: what goes beside a command's answer."""
    from tui.shared.safe_text import visible

    print(visible(redact(line)), file=sys.stderr)


def error_line(exc: DelegateError) -> str:
    """``delegate: code: message`` as one line a terminal shows as text."""
    from tui.shared.safe_text import visible

    message = " ".join(visible(redact(exc.message)).split("\n"))
    return f"delegate: {exc.code}: {message}"


def report_error(exc: DelegateError, *, as_json: bool) -> int:
    """A typed error as its JSON payload (``as_json``) or one line on stderr; exit 1."""
    if as_json:
        print_json(exc.to_payload())
    else:
        print(error_line(exc), file=sys.stderr)
    return EXIT_ERROR
