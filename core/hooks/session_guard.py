"""What a Claude Code session a person runs is told at a restart, and when it is refused.

Two of delegate's Claude Code hooks, beside :mod:`core.hooks.handler`:

- ``SessionStart`` with ``source`` ``resume`` or ``compact`` (the same session goes
  on, or its window was just compacted): the hand-off that matters to it is added
  to its context: the one it wrote itself (it handed off: say where the work
  continues), else the one it was started from (a compaction dropped it); only as
  delegate registered it (an edited one is named, not given) and redacted.
- ``UserPromptSubmit``: past the force level a prompt is refused (``decision``
  ``block``), the reason naming the session the work continues in, or the
  hand-off to continue from.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from core import ids
from core.context.thresholds import effective_context, exhausted
from core.continuation.handoff_pipeline import HandoffPipeline
from core.continuation.handoff_text import continuation_prompt
from core.documents.handoff_registry import changed_notice, previous_handoff, read_registered
from core.errors import DelegateError, HandoffChanged
from core.events import HandoffModified
from core.models import ContextDocument, DocumentKind, Session
from core.orchestrator import AgentOrchestrator
from core.redact import redact

log = logging.getLogger(__name__)

GOING_ON_SOURCES = frozenset({"resume", "compact"})
"""``SessionStart`` sources where the same session goes on (its hand-off is re-given)."""


async def _session(
    orchestrator: AgentOrchestrator, session_id: str, claude_dir: Path | None, wait: bool
) -> Session | None:
    """The session as its transcript says now (imported first), or None if unknown.

    ``wait`` False: when another process is importing, what the store knows is used.
    """
    from core.importing.importer import import_transcript  # deferred: multiprocessing et al.

    try:
        await import_transcript(
            orchestrator.store, ids.CLAUDE_CODE, session_id, claude_dir, wait=wait
        )
    except DelegateError as exc:  # no transcript yet, or busy: what the store knows holds
        log.info("session %s not imported: %s", session_id, exc)
    try:
        return await orchestrator.get_session(session_id)
    except DelegateError:
        return None


async def announce_changed(
    orchestrator: AgentOrchestrator, document: ContextDocument, consumer: str
) -> None:
    """Tell the person (history, the panel, ``watch``) that ``document`` was edited on
    disk and so not given to ``consumer``."""
    await orchestrator.emit(
        HandoffModified(
            at=orchestrator.clock(),
            conversation_id=document.source_session or consumer,
            document_id=document.document_id,
            path=document.path,
            consumer=consumer,
        )
    )


def _context(text: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "delegate: " + text,
        }
    }


async def _own_handoff(steps: HandoffPipeline, session_id: str) -> ContextDocument | None:
    found = await steps.documents.find(DocumentKind.HANDOFF, source_session=session_id, limit=1)
    return found[0] if found else None


async def refuse_prompt(
    orchestrator: AgentOrchestrator,
    session_id: str,
    *,
    claude_dir: Path | None = None,
    wait: bool = True,
    pipeline: HandoffPipeline | None = None,
) -> dict[str, Any] | None:
    """``UserPromptSubmit``: the refusal of a prompt to a session past the force
    level, or None while it may be prompted. ``pipeline``: the hand-off steps and their
    repositories (made from the orchestrator when not given)."""
    steps = pipeline or HandoffPipeline.of(orchestrator)
    session = await _session(orchestrator, session_id, claude_dir, wait)
    if session is None:
        return None
    refusal = await exhausted(orchestrator.store, orchestrator.settings, session)
    if refusal is None:
        return None
    force = (await asyncio.to_thread(effective_context, orchestrator.settings, session.cwd)).force
    usage = session.context
    reason = (
        f"delegate: this session has used {usage.percent:.0f}% of its context window"
        f" ({usage.used_tokens:,} / {usage.limit_tokens:,} tokens), past the {force}% at"
        " which it takes no more prompts."
    )
    document = await _own_handoff(steps, session_id)
    if refusal.successor_id is not None:
        reason += (
            f" Its work continues in session {refusal.successor_id}:"
            f" `claude --resume {refusal.successor_id}`."
        )
        if document is not None:
            reason += f" Its hand-off: {document.path}"
    elif document is not None:
        reason += (
            f" Continue from its hand-off, {document.path}: a new Claude Code session in"
            " this project (`claude`, or /clear here) starts from it."
        )
    else:
        reason += (
            f" It has no hand-off yet: `delegate handoff write {session_id}` writes one, and"
            " a new session in this project starts from it."
        )
    return {"decision": "block", "reason": reason}


async def going_on_context(
    orchestrator: AgentOrchestrator,
    session_id: str,
    *,
    claude_dir: Path | None = None,
    wait: bool = True,
    pipeline: HandoffPipeline | None = None,
) -> dict[str, Any] | None:
    """``SessionStart`` (``resume``, ``compact``): the hand-off added to the context of a
    session that goes on, or None when it has none. ``pipeline``: as for
    :func:`refuse_prompt`."""
    steps = pipeline or HandoffPipeline.of(orchestrator)
    session = await _session(orchestrator, session_id, claude_dir, wait)
    if session is None:
        return None
    own = await _own_handoff(steps, session_id)
    document = own or await previous_handoff(steps, session)
    if document is None:
        return None
    path = Path(document.path)
    try:
        text = redact(await asyncio.to_thread(read_registered, document))
    except HandoffChanged:
        await announce_changed(orchestrator, document, session_id)
        return _context(changed_notice(document.path))
    except (OSError, DelegateError) as exc:
        log.info("hand-off %s cannot be read: %s", path, exc)
        return None
    if own is None:
        # Where it started from, again (a compaction dropped it; a resume may not
        # carry it): said so, so it is not taken for a second hand-off.
        context = "This session started from a hand-off; here it is again. " + (
            continuation_prompt(path, text)
        )
    else:
        where = (
            f"its work continues in session {session.continued_in}; continue there"
            if session.continued_in
            else "a new session in this project starts from it"
        )
        context = (
            "This session has handed off (its context window was filling up): its"
            f" hand-off document is at {path}, and {where}. The document follows.\n\n{text}"
        )
    return _context(context)
