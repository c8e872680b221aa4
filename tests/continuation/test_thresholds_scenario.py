"""The thresholds end to end: a scripted session driven past 50/70/90 % shows the warning,
writes a correct hand-off, continues in a new linked session that receives the next
follow-up, and at force is sent nothing more — all by the supervisor's default monitors,
with no test double anywhere."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from handoff_support import agent_document, make_repo
from support import query, write_config

from core.documents.handoff_template import validate_handoff
from core.events import (
    BusEvent,
    ContextThresholdCrossed,
    EventBus,
    HandoffWritten,
    SessionContinued,
)
from core.models import ContextLevel, DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator
from core.supervisor import Supervisor
from core.tools import call_tool

DEADLINE_S = 60.0  # a hand-off is two runs and a file; generous for a loaded machine
FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}
TASK = "Implementing the login flow."


def _data_dir(root: Path) -> Path:
    """The ``steady`` agent: writes its own hand-off when asked, and its prompts set
    its context (``half`` 50 %, ``seventy-five`` 75 %, ``ninety-five`` 95 %)."""
    data = write_config(root / "data")
    script = data / "steady.toml"
    document = agent_document(TASK).replace("'''", "")
    script.write_text(
        f"""
[[rules]]
match = "hands off to a new one"
reply = '''{document}'''
[[rules]]
match = "(?i)^half"
reply = "planned"
context_tokens = 100000
[[rules]]
match = "(?i)^seventy-five"
reply = "logout written"
context_tokens = 150000
[[rules]]
match = "(?i)^ninety-five"
reply = "tests written"
context_tokens = 190000
[[rules]]
match = "."
reply = "turn {{turn}}: carrying on"
""",
        encoding="utf-8",
    )
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.steady]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 200000\n'
        )
    return data


class _Seen:
    """Every event on the bus, and a wait (with a deadline) for one that matches."""

    def __init__(self) -> None:
        self.events: list[BusEvent] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: BusEvent) -> None:
        self.events.append(event)
        self._arrived.set()

    async def wait_for(
        self, matches: Callable[[BusEvent], bool], deadline_s: float = DEADLINE_S
    ) -> BusEvent:
        async def first() -> BusEvent:
            while True:
                found = [e for e in self.events if matches(e)]
                if found:
                    return found[0]
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(first(), deadline_s)


@contextmanager
def recording(bus: EventBus) -> Iterator[_Seen]:
    seen = _Seen()
    remove = bus.add_listener(seen)
    try:
        yield seen
    finally:
        remove()


def _levels(events: list[object], cid: str) -> list[ContextLevel]:
    return [
        e.level
        for e in events
        if isinstance(e, ContextThresholdCrossed) and e.conversation_id == cid
    ]


async def test_a_session_driven_past_50_70_90_warns_hands_off_continues_and_stops(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    orch = await AgentOrchestrator.open(_data_dir(tmp_path))
    try:
        with recording(orch.bus) as seen:
            async with Supervisor(orch, **FAST):  # the default monitors
                # 50 %: the warning.
                [run] = await orch.delegate(
                    prompt="half: plan the auth work", agent_id="steady", cwd=str(repo)
                )
                await run.wait()
                first = run.conversation_id
                await seen.wait_for(
                    lambda e: isinstance(e, ContextThresholdCrossed) and e.conversation_id == first
                )
                assert _levels(seen.events, first) == [ContextLevel.NOTIFY]

                # 75 %: reminder and hand-off; the agent writes it, a new session continues.
                [run] = await orch.delegate(
                    prompt="seventy-five: implement logout", conversation_id=first
                )
                await run.wait()
                continued = await seen.wait_for(
                    lambda e: isinstance(e, SessionContinued) and e.conversation_id == first,
                    DEADLINE_S,
                )
                assert isinstance(continued, SessionContinued)
                second = continued.successor_id
                assert _levels(seen.events, first) == [
                    ContextLevel.NOTIFY,
                    ContextLevel.REMINDER,
                    ContextLevel.HANDOFF,
                ]
                [written] = [
                    e
                    for e in seen.events
                    if isinstance(e, HandoffWritten) and e.conversation_id == first
                ]
                assert written.producer == "agent"
                document = Path(written.path)
                assert document.parent == repo / ".delegate" / "handoffs"
                assert document.name.startswith("handoff-")
                text = document.read_text(encoding="utf-8")
                assert validate_handoff(text) == []
                assert TASK in text
                assert first in text  # the previous instance
                [registered] = await orch.store.documents.find(
                    DocumentKind.HANDOFF, source_session=first
                )
                assert registered.status is DocumentStatus.CONSUMED
                assert registered.consumers == (second,)
                assert (await orch.get_session(first)).continued_in == second
                assert (await orch.get_session(second)).continued_from == first

                # The next follow-up to the old id runs in the new session, and says so.
                answer = await call_tool(
                    orch,
                    "delegate_agent",
                    {"conversation_id": first, "prompt": "ninety-five: finish the tests"},
                )
                assert answer["status"] == "ok", answer
                assert answer["conversation_id"] == second
                assert answer["continued_in"] == second

                # 95 %: past force in one turn. The agent is sent nothing more: the
                # hand-off is built from facts, and the work continues once again.
                again = await seen.wait_for(
                    lambda e: isinstance(e, SessionContinued) and e.conversation_id == second,
                    DEADLINE_S,
                )
                assert isinstance(again, SessionContinued)
                third = again.successor_id
        assert _levels(seen.events, second) == [
            ContextLevel.NOTIFY,
            ContextLevel.REMINDER,
            ContextLevel.HANDOFF,
            ContextLevel.FORCE,
        ]
        runs_of_second = query(
            orch.store.path.parent,
            "SELECT prompt FROM runs WHERE conversation_id = ? ORDER BY started_at",
            [second],
        )
        assert len(runs_of_second) == 2  # its first turn and the 95 % one: no hand-off prompt
        [latest] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=second)
        assert latest.producer == "facts"
        assert latest.previous_id == registered.document_id  # the chain
        assert validate_handoff(Path(latest.path).read_text(encoding="utf-8")) == []
        [run] = await orch.delegate(prompt="status?", conversation_id=first)
        assert (await run.wait()).status.value == "completed"
        assert (run.conversation_id, run.routed_from) == (third, first)
    finally:
        await orch.close()
