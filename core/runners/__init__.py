"""Agent back ends behind one protocol (see :mod:`core.runners.base`)."""

from core.runners.base import (
    ConversationIdAssigned,
    MessageOut,
    RunCompleted,
    RunEvent,
    RunFailed,
    Runner,
    RunRequest,
    RunStarted,
    StderrLine,
    TextDelta,
)
from core.runners.registry import build_runner

__all__ = [
    "ConversationIdAssigned",
    "MessageOut",
    "RunCompleted",
    "RunEvent",
    "RunFailed",
    "RunRequest",
    "RunStarted",
    "Runner",
    "StderrLine",
    "TextDelta",
    "build_runner",
]
