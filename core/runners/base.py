"""The runner protocol: an agent back end is an async iterator of run events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.models import Role, Usage


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


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A chunk of the reply as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class MessageOut:
    """A finished message of the reply (assistant text, or a tool call/result)."""

    role: Role
    content: str
    tool: dict[str, Any] | None = field(default=None)


@dataclass(frozen=True, slots=True)
class RunCompleted:
    usage: Usage


@dataclass(frozen=True, slots=True)
class RunFailed:
    error: str


RunEvent = RunStarted | TextDelta | MessageOut | RunCompleted | RunFailed


class Runner(Protocol):
    """An agent back end. ``run`` yields events and ends after completed or failed."""

    def run(self, request: RunRequest) -> AsyncIterator[RunEvent]: ...
