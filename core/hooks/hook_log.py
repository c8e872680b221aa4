"""Why a hook let its agent go on: ``hooks.log`` in the data folder.

A hook never makes its agent wait and never fails it (:mod:`core.hooks.entry`), so
what goes wrong is told here: one line per problem (when, the agent and event, why),
redacted, flattened to one line and cut at :data:`MAX_LINE_CHARS` (a reason never
carries a payload). Appended with one ``write``, created ``0600``, only ever a regular
file (a link planted at its name is refused), moved to ``hooks.log.1`` once past
:data:`MAX_LOG_BYTES`. Work left undone is queued beside it
(:mod:`core.supervisor.hook_queue`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

from core.redact import redact
from core.supervisor.hook_queue import append_line

LOG_FILENAME = "hooks.log"
MAX_LOG_BYTES = 256 * 1024
"""Past this the log is moved to ``hooks.log.1`` (one generation kept)."""
MAX_LINE_CHARS = 500
"""A log line is cut here: a reason never carries a payload."""


def _one_line(text: str) -> str:
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= MAX_LINE_CHARS else flat[: MAX_LINE_CHARS - 1] + "…"


def log_problem(data_dir: Path, agent: str, event: str, reason: str) -> bool:
    """Record why a hook let its agent go on; False when even that could not be written."""
    path = data_dir / LOG_FILENAME
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = f"{at} {_one_line(agent)} {_one_line(event)}: {_one_line(reason)}\n"
    try:
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_LOG_BYTES:
                os.replace(path, data_dir / f"{LOG_FILENAME}.1")
        append_line(path, line)
    except OSError:
        return False
    return True
