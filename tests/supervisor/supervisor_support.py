"""Shared by the supervisor tests: an event recorder that waits with a deadline, and real
transcripts copied where a test may append to them."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from core.events import BusEvent, EventBus

DEADLINE_S = 10.0


class Recorder:
    """Every event published on a bus, and a way to wait for one that matches."""

    def __init__(self) -> None:
        self.events: list[BusEvent] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: BusEvent) -> None:
        self.events.append(event)
        self._arrived.set()

    async def wait_for(
        self, matches: Callable[[BusEvent], bool], deadline_s: float = DEADLINE_S
    ) -> BusEvent:
        """The first recorded event that ``matches``, waiting up to ``deadline_s``."""
        loop = asyncio.get_running_loop()
        until = loop.time() + deadline_s
        seen = 0
        while True:
            for event in self.events[seen:]:
                if matches(event):
                    return event
            seen = len(self.events)
            left = until - loop.time()
            if left <= 0:
                kinds = [e.kind for e in self.events]
                raise AssertionError(f"no matching event within {deadline_s} s; saw {kinds}")
            self._arrived.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)


@contextmanager
def recording(bus: EventBus) -> Iterator[Recorder]:
    recorder = Recorder()
    remove = bus.add_listener(recorder)
    try:
        yield recorder
    finally:
        remove()


REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
CLAUDE_SESSION = "a7da6a22-facc-4fcd-8bab-f83c87862004"
CLAUDE_PROJECT = "-src-deep-manifest"


def copy_tree(src: Path, dst: Path) -> Path:
    """A writable copy of ``src`` (the shared originals are read-only)."""
    shutil.copytree(src, dst)
    for path in [dst, *dst.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dst


def assistant_line(session_id: str, context_tokens: int, n: int) -> str:
    """A Claude Code assistant entry whose call read ``context_tokens`` (its context)."""
    return json.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": "assistant",
            "sessionId": session_id,
            "cwd": "/src/deep-manifest",
            "uuid": f"00000000-0000-4000-8000-{n:012d}",
            "timestamp": "2025-11-29T18:00:00.000Z",
            "message": {
                "id": f"msg_appended_{n}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-5-20251101",
                "content": [{"type": "text", "text": f"appended reply {n}"}],
                "usage": {
                    "input_tokens": context_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 100,
                },
            },
        }
    )
