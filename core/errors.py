"""Typed errors with the stable codes the tool responses carry.

Every error a front end can show derives from :class:`DelegateError`; its
``code`` is part of the public contract (JSON tools, MCP, CLI exit payloads)
and never changes once released.
"""

from __future__ import annotations

from typing import ClassVar


class DelegateError(Exception):
    """Base of every error delegate reports to a person or a primary agent."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_payload(self) -> dict[str, object]:
        """The seed's error shape: ``{"status": "error", "error": {...}}``."""
        return {"status": "error", "error": {"code": self.code, "message": self.message}}


class InvalidRequest(DelegateError):
    """A request failed validation; the message names the field."""

    code = "invalid_request"


class InvalidCursor(DelegateError):
    """A pagination cursor that we did not mint, or minted for another listing."""

    code = "invalid_cursor"


class UnknownConversation(DelegateError):
    """No reusable session has this conversation id."""

    code = "unknown_conversation"

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"no reusable session with conversation_id {conversation_id!r}")
        self.conversation_id = conversation_id


class UnknownAgent(DelegateError):
    """The agent id is not configured."""

    code = "unknown_agent"

    def __init__(self, agent_id: str, known: list[str]) -> None:
        choices = ", ".join(sorted(known)) or "none configured"
        super().__init__(f"unknown agent_id {agent_id!r} (configured: {choices})")
        self.agent_id = agent_id


class AgentBusy(DelegateError):
    """A follow-up was sent while the delegate is still running."""

    code = "agent_busy"

    def __init__(self, conversation_id: str) -> None:
        super().__init__("delegate still running")
        self.conversation_id = conversation_id


class SessionNotReady(DelegateError):
    """A detached run has not reached the Ready state yet."""

    code = "session_not_ready"

    def __init__(self, conversation_id: str) -> None:
        super().__init__(
            f"detached session {conversation_id!r} is still pending; follow up once it is ready"
        )
        self.conversation_id = conversation_id


class DismissRefused(DelegateError):
    """Dismissing is refused while a detached run is still pending."""

    code = "dismiss_refused"


class RunnerUnavailable(DelegateError):
    """An agent's runner cannot start (missing binary, bad script, ...)."""

    code = "runner_unavailable"


class StoreError(DelegateError):
    """The store cannot be opened or is from a newer version of delegate."""

    code = "store_error"


class InvalidConfig(DelegateError):
    """The settings file cannot be read; the message names the file and the field."""

    code = "invalid_config"


class CwdMissing(DelegateError):
    """A run's working folder does not exist (deleted, or on another machine)."""

    code = "cwd_missing"

    def __init__(self, cwd: str) -> None:
        super().__init__(
            f"working folder {cwd!r} does not exist (deleted, or on another machine): "
            "restore it, or launch a new session elsewhere"
        )
        self.cwd = cwd


class NotRunning(DelegateError):
    """Asked to stop a session or run that has no run in flight."""

    code = "not_running"

    def __init__(self, ident: str, why: str = "") -> None:
        super().__init__(
            f"nothing to stop: {ident!r} has no run in flight{f' ({why})' if why else ''}"
        )
        self.ident = ident
