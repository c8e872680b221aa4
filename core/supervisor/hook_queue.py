"""The hook work left undone within a hook's budget: its queue, drained by the leader.

A hook that could not do its work in time (another process held the import lock,
the store was busy, the budget ran out; :mod:`core.hooks.entry`) appends its session
to ``hook-queue.jsonl`` in the data folder. On every tick the leading supervisor
takes the queue (moved aside first: a hook appending meanwhile starts a new one, so
nothing is read twice or lost) and imports each queued session's transcript; the
import is a store change like any other, so the context monitor then judges the
session as it judges every changed one. The file is appended to with one ``write``
per line, created ``0600``, only ever a regular file (a link planted at its name is
refused), and takes nothing more past :data:`MAX_QUEUE_BYTES` (the transcript
watcher's re-scan still catches up).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core import ids
from core.errors import DelegateError

if TYPE_CHECKING:
    from core.supervisor.monitors import SupervisorView

log = logging.getLogger(__name__)

QUEUE_FILENAME = "hook-queue.jsonl"
MAX_QUEUE_BYTES = 1024 * 1024
"""Past this the queue takes nothing more (the transcript watcher's re-scan catches up)."""
MAX_DRAIN = 10_000
"""At most this many queued entries are read in one drain."""


@dataclass(frozen=True, slots=True)
class QueuedHook:
    """A hook whose work was deferred: the agent, the event, the session."""

    agent: str
    event: str
    session_id: str


def append_line(path: Path, line: str) -> None:
    """Append one line to a regular file (created 0600; a link or a FIFO is refused)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.write(fd, line.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def defer(data_dir: Path, hook: QueuedHook) -> bool:
    """Queue a hook's work for the supervisor; False when it cannot be (full, unwritable)."""
    if not ids.is_valid_id(hook.agent, hook.session_id):
        return False
    path = data_dir / QUEUE_FILENAME
    line = json.dumps({"agent": hook.agent, "event": hook.event[:64], "session": hook.session_id})
    try:
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(path).st_size > MAX_QUEUE_BYTES:
                return False
        append_line(path, line + "\n")
    except OSError:
        return False
    return True


def take_deferred(data_dir: Path) -> list[QueuedHook]:
    """The queued hooks (each session once, oldest first), the queue emptied.

    The queue is first moved aside (atomic), so a hook appending meanwhile starts a
    new one and nothing is read twice or lost.
    """
    path = data_dir / QUEUE_FILENAME
    taken = data_dir / f"{QUEUE_FILENAME}.{os.getpid()}.draining"
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return []
        os.replace(path, taken)
    except OSError:
        return []
    try:
        fd = os.open(taken, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as file:
            data = file.read(MAX_QUEUE_BYTES * 2)
    except OSError:
        return []
    finally:
        with contextlib.suppress(OSError):
            os.unlink(taken)
    found: dict[tuple[str, str], QueuedHook] = {}
    for raw in data.splitlines()[:MAX_DRAIN]:
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict):
            continue
        agent, event, session = entry.get("agent"), entry.get("event"), entry.get("session")
        if not (isinstance(agent, str) and isinstance(event, str) and isinstance(session, str)):
            continue
        if agent not in (ids.CLAUDE_CODE, ids.CODEX) or not ids.is_valid_id(agent, session):
            continue
        found.setdefault((agent, session), QueuedHook(agent, event, session))
    return list(found.values())


class HookQueue:
    """Drains ``hook-queue.jsonl`` on every tick (a monitor: only the leader runs it).

    ``claude_dir`` / ``codex_dir``: the agents' folders (default: their usual ones);
    ``on_imported``: told after an import that read something (the store watcher's poke).
    """

    def __init__(
        self,
        claude_dir: Path | None = None,
        codex_dir: Path | None = None,
        on_imported: Callable[[], None] | None = None,
    ) -> None:
        self.claude_dir = claude_dir
        self.codex_dir = codex_dir
        self.on_imported = on_imported

    async def on_tick(self, supervisor: SupervisorView) -> None:
        from core.importing.importer import import_transcript  # deferred: multiprocessing et al.

        store = supervisor.orchestrator.store
        queued = await asyncio.to_thread(take_deferred, store.path.parent)
        imported = False
        for hook in queued:
            root = self.claude_dir if hook.agent == ids.CLAUDE_CODE else self.codex_dir
            try:
                imported |= await import_transcript(
                    store,
                    hook.agent,
                    hook.session_id,
                    root,
                    windows=supervisor.orchestrator.settings.context,
                )
            except DelegateError as exc:  # the transcript watcher's re-scan catches up
                log.warning("deferred hook of %s: %s", hook.session_id, exc)
        if imported and self.on_imported is not None:
            self.on_imported()

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        return None
