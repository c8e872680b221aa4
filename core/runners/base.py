"""The runner protocol: an agent back end is an async iterator of run events."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.models import Message, Role, Usage


@dataclass(frozen=True, slots=True)
class RunRequest:
    """Everything a runner needs for one launch or follow-up."""

    run_id: str
    conversation_id: str
    agent_id: str
    prompt: str
    cwd: Path
    turn: int  # 1 for a launch, 2.. for follow-ups
    context_tokens: int = 0  # what the conversation held before this prompt
    is_follow_up: bool = False
    # The conversation so far, oldest first, for runners that keep no transcript
    # of their own (``wants_history``); empty for the others.
    history: Sequence[Message] = ()
    # A sub-agent's share of its parent (system and context), for runners that take
    # it as a system prompt: real CLIs, at launch (their session keeps it after).
    system_prompt: str = ""
    # Folders the agent must be able to write into even where its CLI would ask a
    # person first: a role's artifacts folder, where its hand-off file goes.
    writable_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A chunk of the reply as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class StderrLine:
    """One line the agent wrote to its standard error, as it arrives."""

    text: str


@dataclass(frozen=True, slots=True)
class MessageOut:
    """A finished message of the reply (assistant text, or a tool call/result)."""

    role: Role
    content: str
    tool: dict[str, Any] | None = field(default=None)


@dataclass(frozen=True, slots=True)
class ConversationIdAssigned:
    """The agent named the conversation itself (Codex's thread id): re-key the session."""

    external_id: str


@dataclass(frozen=True, slots=True)
class RunCompleted:
    usage: Usage
    # What the agent reports its context holds after the run (replaces our own
    # running count) and its context window, when it says.
    context_tokens: int | None = None
    context_limit: int | None = None
    stderr: str = ""  # the tail of a CLI's standard error, kept on the run


@dataclass(frozen=True, slots=True)
class RunFailed:
    error: str
    stderr: str = ""


RunEvent = (
    RunStarted
    | TextDelta
    | StderrLine
    | MessageOut
    | ConversationIdAssigned
    | RunCompleted
    | RunFailed
)


class Runner(Protocol):
    """An agent back end. ``run`` yields events and ends after completed or failed.

    ``owns_transcript``: the agent writes its own transcript (a CLI), so the
    orchestrator stores neither the prompt nor the reply; the importer indexes
    the agent's file instead. ``wants_history``: the runner needs the stored
    conversation in :attr:`RunRequest.history` (a stateless model endpoint).
    """

    @property
    def owns_transcript(self) -> bool: ...

    @property
    def wants_history(self) -> bool: ...

    def run(self, request: RunRequest) -> AsyncIterator[RunEvent]: ...


@contextlib.asynccontextmanager
async def closing(events: AsyncIterator[RunEvent]) -> AsyncIterator[AsyncIterator[RunEvent]]:
    """Iterate a runner's events; however the loop ends, the stream is closed on the way out.

    A runner's ``run`` is an async generator: closing it runs its ``finally``
    blocks (a CLI runner kills its process group there) before the caller goes
    on to store the run as closed. Without this, a loop body that raises leaves
    the generator suspended and the agent running until garbage collection.
    """
    try:
        yield events
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


def json_object(text: str) -> dict[str, Any] | None:
    """One stream line decoded as a JSON object; None when it is anything else.

    A line nested deeper than the interpreter's recursion limit is as unreadable
    as a malformed one: skipped, never fatal to the run.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
