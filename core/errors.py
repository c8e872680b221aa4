"""Typed errors with the stable codes the tool responses carry.

Every error a front end can show derives from :class:`DelegateError`; its
``code`` is part of the public contract (JSON tools, MCP, CLI exit payloads)
and never changes once released.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar, Protocol

from core.redact import redact


class DelegateError(Exception):
    """Base of every error delegate reports to a person or a primary agent."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_payload(self) -> dict[str, object]:
        """The seed's error shape: ``{"status": "error", "error": {...}}``."""
        # Messages quote agent output and config values: never pass a secret on.
        return {"status": "error", "error": {"code": self.code, "message": redact(self.message)}}


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


class InvalidId(DelegateError):
    """A conversation id that is not the shape its agent mints (never passed to a CLI)."""

    code = "invalid_id"


class DismissRefused(DelegateError):
    """Dismissing is refused while a detached run is still pending."""

    code = "dismiss_refused"

    @classmethod
    def busy(cls, conversation_id: str, *, pending: bool) -> DismissRefused:
        """The refusal for a session whose run has not ended (pending: detached)."""
        if pending:
            return cls(
                f"detached session {conversation_id!r} is still pending; "
                "dismiss it once it is ready"
            )
        return cls(f"session {conversation_id!r} is still running; dismiss it when the run ends")


class ContextExhausted(DelegateError):
    """The session's context passed the force threshold: delegate sends it no more prompts."""

    code = "context_exhausted"

    def __init__(self, conversation_id: str, successor_id: str | None, percent: float) -> None:
        if successor_id is not None:
            how = f"its work continues in session {successor_id}; follow up there"
        else:
            how = (
                "continue from its hand-off (`delegate handoff list`, then"
                " `delegate handoff continue FILE`)"
            )
        super().__init__(
            f"session {conversation_id!r} has used {percent:.0f}% of its context window; {how}"
        )
        self.conversation_id = conversation_id
        self.successor_id = successor_id

    def to_payload(self) -> dict[str, object]:
        """The error, with ``successor_id``: where a follow-up goes instead (or null)."""
        payload = super().to_payload()
        error = payload["error"]
        assert isinstance(error, dict)
        error["successor_id"] = self.successor_id
        return payload


class HasDependants(DelegateError):
    """Purging a session other sessions reference (children, forks, a hand-off chain)."""

    code = "has_dependants"

    def __init__(self, conversation_id: str, dependants: list[str]) -> None:
        shown = ", ".join(dependants[:10]) + (" …" if len(dependants) > 10 else "")
        super().__init__(
            f"session {conversation_id!r} is referenced by {len(dependants)} other"
            f" session(s) ({shown}); purge with --force to remove it anyway"
        )
        self.conversation_id = conversation_id
        self.dependants = dependants

    def to_payload(self) -> dict[str, object]:
        payload = super().to_payload()
        error = payload["error"]
        assert isinstance(error, dict)
        error["dependants"] = list(self.dependants)
        return payload


class ProblemLike(Protocol):
    """A problem found in a document (``core.documents.problems.Problem``), as an error
    reports it; a protocol, since the foundations import no layer above them."""

    @property
    def line(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...


class CapsuleRefused(DelegateError):
    """A launch refused the capsule it was asked to carry; ``problems`` says why (each
    with its line and stable code, as ``delegate capsule check`` reports them)."""

    def __init__(self, path: str, what: str, problems: Sequence[ProblemLike], remedy: str) -> None:
        # "line N: code (message)", no colon after a word like "secret": the redaction of
        # every message would take what follows for a secret's value and mask it.
        shown = "; ".join(f"line {p.line}: {p.code} ({p.message})" for p in problems[:5])
        more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        super().__init__(f"capsule {path} {what}. {shown}{more}. {remedy}")
        self.path = path
        self.problems = list(problems)

    def to_payload(self) -> dict[str, object]:
        payload = super().to_payload()
        error = payload["error"]
        assert isinstance(error, dict)
        error["path"] = self.path
        error["problems"] = [
            {"line": p.line, "code": p.code, "message": redact(p.message)} for p in self.problems
        ]
        return payload


class CapsuleInvalid(CapsuleRefused):
    """The capsule does not parse, or breaks its structure or budget."""

    code = "capsule_invalid"

    def __init__(self, path: str, problems: Sequence[ProblemLike]) -> None:
        super().__init__(path, "is not valid", problems, "Fix it and launch again.")


class CapsuleHasSecrets(CapsuleRefused):
    """The capsule holds what looks like a secret, and the launch did not allow it."""

    code = "capsule_has_secrets"

    def __init__(self, path: str, problems: Sequence[ProblemLike]) -> None:
        super().__init__(
            path,
            "holds what looks like a secret",
            problems,
            "Redact it (delegate capsule check --redact), or launch with --allow-secrets.",
        )


class StaleCapsule(CapsuleRefused):
    """Files the capsule references changed since it was written, and the launch did not
    accept that."""

    code = "capsule_stale"

    def __init__(self, path: str, problems: Sequence[ProblemLike]) -> None:
        super().__init__(path, "is stale", problems, "Refresh it, or launch with --accept-stale.")


class UnknownCheckpoint(DelegateError):
    code = "unknown_checkpoint"


class UnknownDocument(DelegateError):
    """No registered context document (hand-off, capsule, return) has this id or path."""

    code = "unknown_document"


class DocumentInvalid(DelegateError):
    """A context document failed validation (sections, budget, secrets, path)."""

    code = "document_invalid"


class CapsuleNotFound(DelegateError):
    """No capsule where one was asked for (``latest`` of a branch without one, a missing file)."""

    code = "capsule_not_found"


class DocumentPathUnsafe(DelegateError):
    """A document path (hand-off) that is not inside a ``.delegate/`` folder of delegate's:
    it is never read, and nothing of what is there is quoted."""

    code = "document_path_unsafe"


class CapsulePathUnsafe(DelegateError):
    """A capsule path outside the repository, through a symbolic link, or not a regular file."""

    code = "capsule_path_unsafe"


class InboxEntryUnknown(DelegateError):
    """No outstanding remember-later entry has this id (never written, or consumed already)."""

    code = "inbox_entry_unknown"


class ContinuationFailed(DelegateError):
    """The session that was to continue a hand-off did not start (its first run failed)."""

    code = "continuation_failed"


class CapsuleRequestFailed(DelegateError):
    """A session asked for its capsule did not give one: the run failed or took too long,
    or its reply held no capsule. Nothing was saved."""

    code = "capsule_request_failed"


class UnknownRole(DelegateError):
    """A compact-return role that is not one of the seed's (developer, qa_expert, ...)."""

    code = "unknown_role"


class ArtifactIdUnsafe(DelegateError):
    """An artifacts session, group or role id that could escape its folder or collide
    (a path separator, ``..``, NUL, a leading dash, too long)."""

    code = "artifact_id_unsafe"


class HandoffFileInvalid(DelegateError):
    """A role's hand-off file is missing, not a regular file, not JSON, or not the role's
    schema (the message names the file and the field)."""

    code = "handoff_file_invalid"


class ReturnGroupUnknown(DelegateError):
    """No compact returns are recorded for this artifacts session (or group)."""

    code = "return_group_unknown"


class HookSettingsUnusable(DelegateError):
    """An agent's settings file cannot take delegate's hooks (unreadable, not a regular
    file, not the format the agent reads); the message names the file and what to fix."""

    code = "hook_settings_unusable"


class HookInputRefused(InvalidRequest):
    """An agent's hook passed input delegate will not read (too large, not UTF-8, nested
    too deep, not a JSON object); the hook lets the agent go on and logs why."""


class ImportBusy(DelegateError):
    """Another delegate process is importing (the import lock is held) and the caller
    may not wait (a hook answers within its budget and leaves the import to later)."""

    code = "import_busy"


class HandoffChanged(DelegateError):
    """A hand-off's file no longer has the digest delegate registered for it (edited on
    disk): it is not given to an agent until a person reviews it."""

    code = "handoff_changed"


class RunnerUnavailable(DelegateError):
    """An agent's runner cannot start (missing binary, bad script, ...)."""

    code = "runner_unavailable"


class NoAgentInstalled(RunnerUnavailable):
    """A launch names no agent and no real one is installed to be the default."""

    def __init__(self) -> None:
        super().__init__(
            "no agent CLI found to launch: install Claude Code (npm install -g "
            "@anthropic-ai/claude-code) or Codex (npm install -g @openai/codex), set "
            "default_agent in config.toml, or name one with --agent (echo is the scripted "
            "demo agent)"
        )


class StoreError(DelegateError):
    """The store cannot be opened or is from a newer version of delegate."""

    code = "store_error"


class DiskFull(DelegateError):
    """A write refused because the file system holding ``folder`` is full (or over its
    quota); nothing was written: free space there and the same command works."""

    code = "disk_full"

    def __init__(self, folder: str, what: str = "") -> None:
        folder = os.path.abspath(folder)  # where to free space, whatever the working folder
        about = f" ({what})" if what else ""
        super().__init__(
            f"the disk holding {folder} is full{about}: free space in {folder} and retry;"
            " nothing was written"
        )
        self.folder = folder

    def to_payload(self) -> dict[str, object]:
        """The error, with ``folder``: where space must be freed."""
        payload = super().to_payload()
        error = payload["error"]
        assert isinstance(error, dict)
        error["folder"] = self.folder
        return payload


class StoreReplaced(StoreError):
    """The store file was replaced (copied or moved over) while delegate had it open."""

    code = "store_replaced"


class StoreRemoved(StoreError):
    """The store file was removed while delegate had it open."""

    code = "store_removed"


class StoreBusy(StoreError):
    """Another process held the store (or a lock of its data folder) past the wait."""

    code = "store_busy"


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


class NotReopenable(DelegateError):
    """A session that has no agent CLI of its own to open it in (delegate's own
    conversations, a sub-agent that lives inside its parent's session)."""

    code = "not_reopenable"


class NotRunning(DelegateError):
    """Asked to stop a session or run that has no run in flight."""

    code = "not_running"

    def __init__(self, ident: str, why: str = "") -> None:
        super().__init__(
            f"nothing to stop: {ident!r} has no run in flight{f' ({why})' if why else ''}"
        )
        self.ident = ident


class UnknownRun(DelegateError):
    """No run has this run id."""

    code = "unknown_run"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run with run_id {run_id!r}")
        self.run_id = run_id


class AmbiguousId(DelegateError):
    """An id prefix matches more than one session; the message lists them."""

    code = "ambiguous_id"

    def __init__(
        self, prefix: str, candidates: list[str], more: bool, what: str = "sessions"
    ) -> None:
        listed = ", ".join(candidates) + (", ..." if more else "")
        super().__init__(f"{prefix!r} matches several {what} ({listed}); type more of the id")
        self.prefix = prefix
        self.candidates = candidates


class WorkerUnavailable(DelegateError):
    """A detached run's background process cannot start (no process slots, an
    unwritable or odd log file in the data folder); nothing was recorded."""

    code = "worker_unavailable"


class InternalError(DelegateError):
    """Something delegate did not expect; the one line names it so it can be reported."""

    code = "internal_error"

    def __init__(self, exc: BaseException) -> None:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        super().__init__(
            f"unexpected {type(exc).__name__}"
            + (f": {detail}" if detail else "")
            + " (a bug in delegate: please report it with the command that caused it)"
        )
