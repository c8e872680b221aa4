"""What delegate does when an agent CLI's hook fires (``delegate hook AGENT EVENT``).

Claude Code (stdin: one JSON object; stdout: the hook's JSON answer):

- ``Stop`` (a turn ended): the session's transcript is imported and its context
  judged against the thresholds (crossings recorded and announced once; the
  warning levels are also said to the person, as a system message). From
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
  added to the new session's context (redacted), and marked consumed by it; at
  the new session's first ``Stop`` the two sessions are linked (``continued_in``).
  A hand-off edited on disk since delegate registered it (its digest differs) is
  not given: the context says it changed and a ``handoff_changed`` event tells the
  person to review it.

``SessionStart`` with ``resume`` or ``compact`` and ``UserPromptSubmit`` (a prompt
refused past the force level) are :mod:`core.hooks.session_guard`'s.

Sessions delegate itself drives are left to :class:`~core.continuation.Continuation`
(it asks the agent through its own runs); their turns are still imported and judged.

Codex (``notify``: the JSON is the program's last argument): the transcript is
imported and the thresholds judged; a hand-off is built from facts (Codex
offers no way to add to its agent's context from ``notify``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import ids
from core.context.thresholds import HandOff, threshold_of
from core.continuation.handoff_pipeline import WRITE_ERRORS, HandoffPipeline, write_problem
from core.continuation.handoff_text import continuation_prompt, subagents_at_work, with_known_facts
from core.continuation.service import OURS
from core.documents.handoff_facts import git_facts
from core.documents.handoff_files import handoffs_dir
from core.documents.handoff_registry import changed_notice, previous_handoff, read_registered
from core.documents.handoff_template import (
    HandoffHeader,
    extract_handoff,
    handoff_request,
    parse_handoff,
    render_handoff,
    validate_handoff,
)
from core.errors import DelegateError, HandoffChanged, InvalidRequest
from core.gitinfo import worktree_root
from core.hooks.payload import parse_payload
from core.models import ContextDocument, ContextLevel, DocumentKind, DocumentStatus, Session
from core.orchestrator import AgentOrchestrator
from core.redact import redact
from core.supervisor.context_monitor import (
    HANDOFF_LEASE_S,
    ContextCheck,
    check_context,
    hand_off_once,
    has_handoff,
)
from core.supervisor.leader import new_holder
from core.supervisor.monitors import MonitorRepos

log = logging.getLogger(__name__)

WARNING_LEVELS = frozenset({ContextLevel.NOTIFY, ContextLevel.REMINDER})
"""Levels a person is told about (the hand-off level acts instead; at force it is done)."""
NEW_WORK_SOURCES = frozenset({"startup", "clear"})
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
    def parse(cls, event: str, raw: str | bytes) -> ClaudeHookInput:
        return cls.from_payload(event, parse_payload(raw))

    @classmethod
    def from_payload(cls, event: str, payload: dict[str, Any]) -> ClaudeHookInput:
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


class ClaudeCodeHooks:
    """Answers Claude Code's hooks for one data folder.

    ``claude_dir``: Claude Code's folder (default ``$CLAUDE_CONFIG_DIR`` or
    ``~/.claude``). ``continuation``: builds a hand-off from facts when the
    agent's own is unusable (None: the next turn asks the agent again).
    ``wait_for_import``: False for a hook on its budget (:mod:`core.hooks.entry`): when
    another process holds the import lock, :class:`~core.errors.ImportBusy` at once.
    ``pipeline`` and ``repos``: the hand-off steps and the repositories the context judge
    and the hand-off lease use (made from the orchestrator's store when not given).
    """

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        claude_dir: Path | None = None,
        continuation: HandOff | None = None,
        lease_s: float = HANDOFF_LEASE_S,
        wait_for_import: bool = True,
        pipeline: HandoffPipeline | None = None,
        repos: MonitorRepos | None = None,
    ) -> None:
        self.orchestrator = orchestrator
        self.pipeline = pipeline or HandoffPipeline.of(orchestrator)
        self.repos = repos if repos is not None else MonitorRepos.of(orchestrator.store)
        self.wait_for_import = wait_for_import
        self.claude_dir = claude_dir
        self.continuation = continuation
        self.lease_s = lease_s

    async def handle(self, event: str, raw: str) -> dict[str, Any] | None:
        """The hook's answer (printed as JSON), or None for none."""
        return await self.answer(ClaudeHookInput.parse(event, raw))

    async def answer(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        """The answer to a checked hook input (printed as JSON), or None for none."""
        event = hook.event
        if event == "Stop":
            return await self._on_stop(hook)
        if event == "SessionStart":
            return await self._on_session_start(hook)
        if event == "UserPromptSubmit":
            from core.hooks.session_guard import refuse_prompt

            return await refuse_prompt(
                self.orchestrator,
                hook.session_id,
                claude_dir=self.claude_dir,
                wait=self.wait_for_import,
                pipeline=self.pipeline,
            )
        return None  # an event delegate does not handle (a newer install): nothing to say

    # --- Stop -------------------------------------------------------------------

    async def _on_stop(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        from core.importing.importer import import_transcript  # deferred: multiprocessing et al.

        orch = self.orchestrator
        sid = hook.session_id
        await import_transcript(
            orch.store, ids.CLAUDE_CODE, sid, self.claude_dir, wait=self.wait_for_import
        )
        if hook.stop_hook_active and await self._asked(sid):
            return await self._take_reply(hook)
        await self._link_continuation(sid)
        check = await check_context(orch, sid, repos=self.repos)
        if check is None or hook.stop_hook_active:
            return None
        if not check.wants_handoff:
            return _warning(check)
        if check.session.source == OURS:
            return None  # delegate drives it: its continuation asks the agent itself
        if await has_handoff(orch, sid, repos=self.repos) or not await self._ask(sid):
            return None
        header = await self._header(check.session)
        return {"decision": "block", "reason": handoff_request(header)}

    def _lease(self, sid: str) -> tuple[str, str]:
        return f"handoff:{sid}", f"hook:{ids.CLAUDE_CODE}:{sid}"

    async def _ask(self, sid: str) -> bool:
        """Take the session's hand-off lease until the agent's reply (False: another
        process is handing it off)."""
        name, holder = self._lease(sid)
        clocks = self.orchestrator.clocks
        return await self.repos.leases.acquire(
            name, holder, clocks.wall_us(), int(self.lease_s * 1_000_000), clocks.mono_stamp()
        )

    async def _asked(self, sid: str) -> bool:
        name, holder = self._lease(sid)
        clocks = self.orchestrator.clocks
        now, mono = clocks.wall_us(), clocks.mono_stamp()
        return await self.repos.leases.holder(name, now, mono) == holder

    async def _release(self, sid: str) -> None:
        name, holder = self._lease(sid)
        with contextlib.suppress(DelegateError):  # it expires by itself
            await self.repos.leases.release(name, holder)

    async def _take_reply(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        """The agent answered the hand-off request: keep its document, or say why not."""
        orch, steps = self.orchestrator, self.pipeline
        sid = hook.session_id
        try:
            session = await orch.get_session(sid)
            header = await self._header(session)
            found = extract_handoff(hook.last_assistant_message or "")
            document = render_handoff(header, parse_handoff(found)) if found else ""
            problems = validate_handoff(document) if found else ["no hand-off in the reply"]
            if found and not problems:
                document = render_handoff(header, await self._with_facts(session, found))
                try:
                    path = await self._keep(session, header, document)
                except WRITE_ERRORS as exc:
                    problems = [f"it cannot be written: {write_problem(exc)}"]
                else:
                    return {
                        "systemMessage": f"delegate: hand-off written to {path}. A new Claude"
                        " Code session in this project starts from it."
                    }
            await steps.failed(session, "write", "; ".join(problems))
        finally:
            await self._release(sid)
        why = "delegate: the agent's hand-off was not usable (" + "; ".join(problems) + ")"
        if self.continuation is not None:
            # Never nothing: one from facts, under the lease a supervisor would take too.
            await hand_off_once(orch, self.continuation, sid, holder=new_holder(), repos=self.repos)
            built = await steps.documents.find(DocumentKind.HANDOFF, source_session=sid, limit=1)
            if built:
                return {"systemMessage": f"{why}; one built from facts is at {built[0].path}."}
        return {"systemMessage": f"{why}; it is asked again after the next turn."}

    async def _with_facts(self, session: Session, found: str) -> dict[str, str]:
        """The agent's sections with git's modified files (a checked git work tree only:
        the session's folder comes from its transcript) and the sub-agents at work."""
        place = await self.pipeline.folder(session.cwd, session.source)
        git = await asyncio.to_thread(git_facts, place.repository) if place.repository else None
        children = await subagents_at_work(self.orchestrator, session.conversation_id)
        return with_known_facts(parse_handoff(found), git, children)

    async def _header(self, session: Session) -> HandoffHeader:
        steps = self.pipeline
        previous, position = await steps.predecessor(session)
        project = str(_project_root(session.cwd))
        return steps.header(session, previous, position, project=project, branch=session.git_branch)

    async def _keep(self, session: Session, header: HandoffHeader, document: str) -> Path:
        """Write the document and the pending note, register it, announce it."""
        steps = self.pipeline
        place = await steps.folder(session.cwd, session.source)
        text = redact(document)
        path = await steps.write(place, text, header)
        previous, _position = await steps.predecessor(session)
        doc = await steps.register(
            session,
            path,
            text,
            header,
            producer="agent",
            previous=previous,
            status=DocumentStatus.PENDING,
        )
        await steps.leave_pending(doc, place.root)
        await steps.written(session, doc, "agent", pending=True)
        return path

    async def _link_continuation(self, sid: str) -> None:
        """A session started from a waiting hand-off: link the one that wrote it to this one.

        At its start the new session is not stored yet; its first turn is.
        """
        steps = self.pipeline
        try:
            session = await self.orchestrator.get_session(sid)
        except DelegateError:
            return
        if session.continued_from is not None:
            return
        document = await previous_handoff(steps, session)
        if document is None or document.source_session in (None, sid):
            return
        source_id = document.source_session
        try:
            source = await steps.sessions.get(source_id)
        except DelegateError:
            return  # purged since: the document stands alone
        if source.continued_in is not None:
            return
        await steps.sessions.link_continuation(source_id, sid)
        await steps.continued(source, sid, document.document_id)

    # --- SessionStart -----------------------------------------------------------

    async def _on_session_start(self, hook: ClaudeHookInput) -> dict[str, Any] | None:
        from core.hooks.session_guard import GOING_ON_SOURCES, going_on_context

        if hook.source in GOING_ON_SOURCES:
            return await going_on_context(
                self.orchestrator,
                hook.session_id,
                claude_dir=self.claude_dir,
                wait=self.wait_for_import,
                pipeline=self.pipeline,
            )
        if hook.source not in NEW_WORK_SOURCES or not hook.cwd:
            return None
        repo = (await self.pipeline.folder(hook.cwd, ids.CLAUDE_CODE)).root
        waiting = await self._waiting_handoff(repo)
        if waiting is None:
            return None
        document, text = waiting
        if text is None:  # edited on disk since: named, never given
            from core.hooks.session_guard import announce_changed

            await announce_changed(self.orchestrator, document, hook.session_id)
            return {
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": "delegate: " + changed_notice(document.path),
                }
            }
        await self.pipeline.consume(document, hook.session_id)
        await self.pipeline.clear_note(repo)
        context = "delegate: " + continuation_prompt(Path(document.path), redact(text))
        return {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
        }

    async def _waiting_handoff(self, repo: Path) -> tuple[ContextDocument, str | None] | None:
        """The newest pending hand-off of the project ``repo`` that is still on disk, and
        its text (None: it no longer has the digest delegate registered)."""
        folder = handoffs_dir(repo)
        pending = await self.pipeline.documents.find(
            DocumentKind.HANDOFF, status=DocumentStatus.PENDING
        )
        for document in pending:
            path = Path(document.path)
            if path.parent != folder:
                continue
            try:
                text = await asyncio.to_thread(read_registered, document)
            except HandoffChanged:
                return document, None
            except (OSError, DelegateError) as exc:
                log.info("hand-off %s cannot be read: %s", path, exc)
                continue
            return document, text
        return None


def _warning(check: ContextCheck) -> dict[str, Any] | None:
    """What the person is told when this turn crossed a warning level (once per level)."""
    warned = [level for level in check.newly_crossed if level in WARNING_LEVELS]
    if not warned:
        return None
    usage = check.session.context
    handoff = threshold_of(ContextLevel.HANDOFF, check.settings)
    return {
        "systemMessage": f"delegate: context {usage.percent:.0f}% used"
        f" ({usage.used_tokens:,} / {usage.limit_tokens:,} tokens); this session writes its"
        f" hand-off at {handoff}%."
    }


def _project_root(cwd: str) -> Path:
    """The project a session works in: the git worktree holding ``cwd``, else ``cwd``."""
    folder = Path(cwd or ".")
    return worktree_root(folder) or folder


def codex_thread(payload: dict[str, Any]) -> str | None:
    """The thread a Codex notification is about (checked), or None when it is not the
    end of a turn (another notification: nothing to judge)."""
    if payload.get("type") != "agent-turn-complete":
        return None
    thread_id = payload.get("thread-id")
    if not isinstance(thread_id, str):
        raise InvalidRequest("the notification has no thread-id")
    ids.validate_id(ids.CODEX, thread_id)
    return thread_id


async def on_codex_notify(
    orchestrator: AgentOrchestrator,
    raw: str | bytes | dict[str, Any],
    *,
    codex_dir: Path | None = None,
    continuation: HandOff | None = None,
    wait: bool = True,
) -> None:
    """A Codex turn ended (``notify``): import its transcript, judge its context.

    ``wait`` False: :class:`~core.errors.ImportBusy` when another import holds the lock.
    """
    from core.importing.importer import import_transcript  # deferred: multiprocessing et al.
    from core.supervisor.context_monitor import evaluate_context

    payload = raw if isinstance(raw, dict) else parse_payload(raw)
    thread_id = codex_thread(payload)
    if thread_id is None:
        return
    await import_transcript(orchestrator.store, ids.CODEX, thread_id, codex_dir, wait=wait)
    await evaluate_context(orchestrator, [thread_id], continuation=continuation)
