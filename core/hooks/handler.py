"""What delegate does when an agent CLI's hook fires (``delegate hook AGENT EVENT``).

Claude Code (stdin: one JSON object; stdout: the hook's JSON answer):

- ``Stop`` (a turn ended): the session's transcript is imported and its context
  judged against the thresholds (crossings recorded and announced once). From
  the hand-off level on, while the session has no hand-off, the answer blocks
  the stop with the hand-off template as the reason: Claude Code gives it to
  the agent, which writes its own hand-off in the same turn. At the next
  ``Stop`` (``stop_hook_active``) its reply is validated, rendered around
  delegate's own figures, written to ``<repo>/.delegate/handoffs/`` and
  registered (producer ``agent``, pending: a person continues it). A store
  lease on the session, held from the request to the reply, keeps the
  supervisor from building one from facts meanwhile; a reply that is not a
  hand-off falls back to one built from facts when a continuation is given.
- ``SessionStart`` (a new session): a pending hand-off of the project is
  added to the new session's context, and marked consumed by it.

Codex (``notify``: the JSON is the program's last argument): the transcript is
imported and the thresholds judged; a hand-off is built from facts (Codex
offers no way to add to its agent's context from ``notify``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core import ids
from core.clock import to_us
from core.context.thresholds import PROJECT_FOLDER, HandOff
from core.documents.handoff_template import (
    HandoffHeader,
    extract_handoff,
    handoff_request,
    parse_handoff,
    render_handoff,
    validate_handoff,
)
from core.errors import DelegateError, InvalidRequest
from core.events import HandoffFailed, HandoffWritten
from core.gitinfo import worktree_root
from core.models import DocumentKind, DocumentStatus, Session
from core.orchestrator import AgentOrchestrator
from core.store.documents import NewDocument
from core.supervisor.context_monitor import HANDOFF_LEASE_S, check_context, has_handoff
from core.tokens import count_tokens

log = logging.getLogger(__name__)

HANDOFFS_FOLDER = "handoffs"
PENDING_NOTE = "HANDOFF_PENDING.md"
MAX_PAYLOAD_BYTES = 1024 * 1024
"""A hook's stdin larger than this is refused (Claude Code sends a few hundred bytes)."""
MAX_HANDOFF_READ = 256 * 1024
"""The most of a waiting hand-off added to a new session's context."""
RESUMING_SOURCES = frozenset({"startup", "clear"})
"""``SessionStart`` sources that begin new work (not ``resume`` or ``compact``)."""


@dataclass(frozen=True)
class ClaudeHookInput:
    """The fields of a Claude Code hook's stdin that delegate reads, checked."""

    event: str
    session_id: str
    cwd: str
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    source: str = ""

    @classmethod
    def parse(cls, event: str, raw: str) -> ClaudeHookInput:
        payload = _json_object(raw)
        session_id = payload.get("session_id")
        if not isinstance(session_id, str):
            raise InvalidRequest("the hook's input has no session_id")
        ids.validate_id(ids.CLAUDE_CODE, session_id)
        cwd = payload.get("cwd")
        last = payload.get("last_assistant_message")
        source = payload.get("source")
        return cls(
            event=event,
            session_id=session_id,
            cwd=cwd if isinstance(cwd, str) else "",
            stop_hook_active=payload.get("stop_hook_active") is True,
            last_assistant_message=last if isinstance(last, str) else None,
            source=source if isinstance(source, str) else "",
        )


def _json_object(raw: str) -> dict[str, Any]:
    if len(raw.encode("utf-8", "replace")) > MAX_PAYLOAD_BYTES:
        raise InvalidRequest("the hook's input is larger than 1 MiB")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise InvalidRequest("the hook's input is not JSON") from None
    if not isinstance(payload, dict):
        raise InvalidRequest("the hook's input is not a JSON object")
    return payload


class ClaudeCodeHooks:
    """Answers Claude Code's hooks for one data folder.

    ``claude_dir``: Claude Code's folder (default ``$CLAUDE_CONFIG_DIR`` or
    ``~/.claude``). ``continuation``: builds a hand-off from facts when the
    agent's own is unusable (None: the next turn asks the agent again).
    """

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        claude_dir: Path | None = None,
        continuation: HandOff | None = None,
        lease_s: float = HANDOFF_LEASE_S,
    ) -> None:
        self.orchestrator = orchestrator
        self.claude_dir = claude_dir
        self.continuation = continuation
        self.lease_s = lease_s

    async def handle(self, event: str, raw: str) -> dict[str, Any] | None:
        """The hook's answer (printed as JSON), or None for none."""
        hook = ClaudeHookInput.parse(event, raw)
        if event == "Stop":
            return await self._on_stop(hook)
        if event == "SessionStart":
            return await self._on_session_start(hook)
        return None  # an event delegate does not handle (a newer install): nothing to say

    # --- Stop -------------------------------------------------------------------

    async def _on_stop(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        from core.sources.importer import import_transcript  # deferred: multiprocessing et al.

        orch = self.orchestrator
        sid = hook.session_id
        await import_transcript(orch.store, ids.CLAUDE_CODE, sid, self.claude_dir)
        if hook.stop_hook_active and await self._asked(sid):
            return await self._take_reply(hook)
        check = await check_context(orch, sid)
        if check is None or not check.wants_handoff or hook.stop_hook_active:
            return None
        if await has_handoff(orch, sid) or not await self._ask(sid):
            return None
        header = await self._header(check.session)
        return {"decision": "block", "reason": handoff_request(header)}

    def _lease(self, sid: str) -> tuple[str, str]:
        return f"handoff:{sid}", f"hook:{ids.CLAUDE_CODE}:{sid}"

    async def _ask(self, sid: str) -> bool:
        """Take the session's hand-off lease until the agent's reply (False: another
        process is handing it off)."""
        name, holder = self._lease(sid)
        now = to_us(self.orchestrator.clock())
        return await self.orchestrator.store.leases.acquire(
            name, holder, now, int(self.lease_s * 1_000_000)
        )

    async def _asked(self, sid: str) -> bool:
        name, holder = self._lease(sid)
        now = to_us(self.orchestrator.clock())
        return await self.orchestrator.store.leases.holder(name, now) == holder

    async def _release(self, sid: str) -> None:
        name, holder = self._lease(sid)
        with contextlib.suppress(DelegateError):  # it expires by itself
            await self.orchestrator.store.leases.release(name, holder)

    async def _take_reply(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        """The agent answered the hand-off request: keep its document, or say why not."""
        orch = self.orchestrator
        sid = hook.session_id
        try:
            session = await orch.get_session(sid)
            header = await self._header(session)
            reply = hook.last_assistant_message or ""
            found = extract_handoff(reply)
            document = render_handoff(header, parse_handoff(found)) if found else ""
            problems = validate_handoff(document) if found else ["no hand-off in the reply"]
            if problems:
                await orch.emit(
                    HandoffFailed(
                        at=orch.clock(),
                        conversation_id=sid,
                        agent_id=session.agent_id,
                        stage="write",
                        reason="; ".join(problems),
                    )
                )
            else:
                path = await self._keep(session, header, document)
                return {
                    "systemMessage": f"delegate: hand-off written to {path}. A new Claude Code"
                    " session in this project starts from it."
                }
        finally:
            await self._release(sid)
        if self.continuation is not None:
            await self.continuation.hand_off(sid)  # from facts; reports its own failures
        return {
            "systemMessage": "delegate: the agent's hand-off was not usable ("
            + "; ".join(problems)
            + "); it is asked again after the next turn."
        }

    async def _header(self, session: Session) -> HandoffHeader:
        root = _project_root(session.cwd)
        previous = await self._previous_handoff(session)
        return HandoffHeader(
            created=self.orchestrator.clock().astimezone(),
            previous_instance=session.conversation_id,
            used_tokens=session.context.used_tokens,
            limit_tokens=session.context.limit_tokens,
            project=root.name or str(root),
            branch=session.git_branch,
            previous_handoff=previous[0] if previous else None,
            chain_position=previous[1] + 1 if previous else 1,
        )

    async def _previous_handoff(self, session: Session) -> tuple[str, int] | None:
        """The hand-off this session was started from (its path, its chain's length)."""
        if session.continued_from is None:
            return None
        docs = self.orchestrator.store.documents
        found = await docs.find(DocumentKind.HANDOFF, source_session=session.continued_from)
        if not found:
            return None
        return found[0].path, len(await docs.chain(found[0].document_id))

    async def _keep(self, session: Session, header: HandoffHeader, document: str) -> Path:
        """Write the document and the pending note, register it, announce it."""
        orch = self.orchestrator
        root = _project_root(session.cwd)
        folder = root / PROJECT_FOLDER / HANDOFFS_FOLDER
        path = await asyncio.to_thread(_write_new, folder, header.created, document)
        previous = await self._previous_id(session)
        doc = await orch.store.documents.register(
            NewDocument(
                document_id=str(uuid.uuid4()),
                kind=DocumentKind.HANDOFF,
                path=str(path),
                created_us=to_us(header.created),
                digest=hashlib.sha256(document.encode()).hexdigest(),
                source_session=session.conversation_id,
                previous_id=previous,
                status=DocumentStatus.PENDING,
                producer="agent",
                token_estimate=count_tokens(document),
            )
        )
        await asyncio.to_thread(_write_pending_note, folder, path)
        await orch.emit(
            HandoffWritten(
                at=orch.clock(),
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                document_id=doc.document_id,
                path=str(path),
                producer="agent",
                previous_id=previous,
                pending=True,
            )
        )
        return path

    async def _previous_id(self, session: Session) -> str | None:
        if session.continued_from is None:
            return None
        found = await self.orchestrator.store.documents.find(
            DocumentKind.HANDOFF, source_session=session.continued_from, limit=1
        )
        return found[0].document_id if found else None

    # --- SessionStart -----------------------------------------------------------

    async def _on_session_start(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        if hook.source not in RESUMING_SOURCES or not hook.cwd:
            return None
        waiting = await self._waiting_handoff(Path(hook.cwd))
        if waiting is None:
            return None
        document_id, path, text = waiting
        docs = self.orchestrator.store.documents
        await docs.add_consumer(document_id, hook.session_id)
        await docs.set_status(document_id, DocumentStatus.CONSUMED)
        await asyncio.to_thread(_remove_pending_note, path.parent, path)
        context = (
            "delegate: the previous session of this project handed its work off before its"
            f" context window ran out. Its hand-off document is {path}; it follows in full."
            " Read it completely and continue from its Next Steps.\n\n" + text
        )
        return {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
        }

    async def _waiting_handoff(self, cwd: Path) -> tuple[str, Path, str] | None:
        """The newest pending hand-off of the project holding ``cwd`` that is still on disk."""
        folder = _project_root(str(cwd)) / PROJECT_FOLDER / HANDOFFS_FOLDER
        pending = await self.orchestrator.store.documents.find(
            DocumentKind.HANDOFF, status=DocumentStatus.PENDING
        )
        for doc in pending:
            path = Path(doc.path)
            if path.parent != folder:
                continue
            text = await asyncio.to_thread(_read_regular, path)
            if text is not None:
                return doc.document_id, path, text
        return None


def _project_root(cwd: str) -> Path:
    folder = Path(cwd or ".")
    return worktree_root(folder) or folder


def _write_new(folder: Path, created: datetime, text: str) -> Path:
    """``handoff-YYYY-MM-DD-HHMMSS.md`` in ``folder``, written whole or not at all
    (a name taken in the same second gets ``-2``, ``-3``...)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = "handoff-" + created.strftime("%Y-%m-%d-%H%M%S")
    for n in range(1, 100):
        path = folder / (stem + (f"-{n}" if n > 1 else "") + ".md")
        tmp = folder / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_text(text, encoding="utf-8")
        try:
            os.link(tmp, path)  # fails if the name is taken: never overwrites
        except FileExistsError:
            continue
        finally:
            tmp.unlink()
        return path
    raise OSError(f"no free hand-off file name in {folder}")


def _write_pending_note(folder: Path, path: Path) -> None:
    note = (
        "# Hand-off pending\n\n"
        f"A hand-off was written to `{path.name}` (in this folder). Start a new session in"
        " this project: with delegate's hooks installed it starts from the hand-off; or open"
        " it from delegate's panel.\n"
    )
    tmp = folder / f".{PENDING_NOTE}.{os.getpid()}.tmp"
    tmp.write_text(note, encoding="utf-8")
    os.replace(tmp, folder / PENDING_NOTE)


def _remove_pending_note(folder: Path, path: Path) -> None:
    """Remove the pending note if it names ``path`` (a newer hand-off keeps its own)."""
    note = folder / PENDING_NOTE
    text = _read_regular(note)
    if text is not None and f"`{path.name}`" in text:
        with contextlib.suppress(OSError):
            note.unlink()


def _read_regular(path: Path) -> str | None:
    """A small regular file's text; None for anything else."""
    from core.sources.safe_files import NotRegularFile, read_regular

    try:
        data = read_regular(str(path), MAX_HANDOFF_READ)
    except (NotRegularFile, OSError):
        return None
    return data.decode("utf-8", "replace")


async def on_codex_notify(
    orchestrator: AgentOrchestrator,
    raw: str,
    *,
    codex_dir: Path | None = None,
    continuation: HandOff | None = None,
) -> None:
    """A Codex turn ended (``notify``): import its transcript, judge its context."""
    from core.sources.importer import import_transcript  # deferred: multiprocessing et al.
    from core.supervisor.context_monitor import evaluate_context

    payload = _json_object(raw)
    if payload.get("type") != "agent-turn-complete":
        return  # another notification: nothing to judge
    thread_id = payload.get("thread-id")
    if not isinstance(thread_id, str):
        raise InvalidRequest("the notification has no thread-id")
    ids.validate_id(ids.CODEX, thread_id)
    await import_transcript(orchestrator.store, ids.CODEX, thread_id, codex_dir)
    await evaluate_context(orchestrator, [thread_id], continuation=continuation)
