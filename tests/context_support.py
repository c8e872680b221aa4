"""Shared by the threshold tests: a scripted agent whose prompts set its context, and a
hand-off that records what it was asked (optionally registering a document, as the real
one does)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from support import write_config

from core.clock import to_us
from core.models import DocumentKind
from core.orchestrator import AgentOrchestrator
from core.store import NewDocument

WINDOW = 200_000
HOT_SCRIPT = """
[[rules]]
match = "(?i)^half"
reply = "half way"
context_tokens = 100000
[[rules]]
match = "(?i)^seventy-five"
reply = "three quarters"
context_tokens = 150000
[[rules]]
match = "(?i)^ninety-five"
reply = "nearly full"
context_tokens = 190000
[[rules]]
match = "."
reply = "turn {turn}"
"""


def hot_data_dir(root: Path, extra: str = "") -> Path:
    """A data folder with the ``hot`` agent: ``half ...`` puts its context at 50 %,
    ``seventy-five ...`` at 75 %, ``ninety-five ...`` at 95 %, anything else leaves it."""
    data = write_config(root / "data")
    script = data / "hot.toml"
    script.write_text(HOT_SCRIPT, encoding="utf-8")
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.hot]\nrunner = "scripted"\nscript = "{script}"\n'
            f"context_limit = {WINDOW}\n{extra}\n"
        )
    return data


class RecordingHandOff:
    """A ``HandOff`` that remembers each call; ``registers``: it registers a hand-off
    document for the session (a hand-off that worked), else it writes nothing (a failure)."""

    def __init__(self, orchestrator: AgentOrchestrator, *, registers: bool = True) -> None:
        self.orchestrator = orchestrator
        self.registers = registers
        self.calls: list[str] = []
        self._called = asyncio.Event()

    async def hand_off(self, conversation_id: str) -> None:
        self.calls.append(conversation_id)
        self._called.set()
        if self.registers:
            await self.orchestrator.store.documents.register(
                NewDocument(
                    str(uuid.uuid4()),
                    DocumentKind.HANDOFF,
                    f"/repo/.delegate/handoffs/{conversation_id}.md",
                    to_us(self.orchestrator.clock()),
                    source_session=conversation_id,
                    producer="facts",
                )
            )

    async def wait_calls(self, count: int, deadline_s: float = 10.0) -> None:
        async def enough() -> None:
            while len(self.calls) < count:
                self._called.clear()
                await self._called.wait()

        await asyncio.wait_for(enough(), deadline_s)
