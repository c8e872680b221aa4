"""Recording a role's return: its hand-off file in the documents registry, its step in the
group's chain.

A return that routes on to another role is only as good as the hand-off file that
role will read first: when that file is missing, unreadable, not the role's schema,
or says another status than the return, the return becomes ``INVALID_RETURN`` (rule
``no_handoff``) and the chain stops there. A return that ends the chain (the PM's ``BAZINGA``) or
has no route needs no file; a valid one is registered all the same.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Final

from core.clock import to_us
from core.documents.handoff_registry import digest
from core.errors import HandoffFileInvalid, ReturnGroupUnknown
from core.models import ContextDocument, DocumentKind, DocumentStatus
from core.redact import redact
from core.returns.files import LoadedHandoff, load_handoff
from core.returns.model import (
    END,
    AgentRole,
    CompactReturn,
    ParsedReturn,
    ReturnRule,
    ReturnStep,
    RoleLaunch,
)
from core.returns.parse import rejected
from core.returns.paths import GroupPaths
from core.store import NewDocument, NewReturnStep, Store
from core.tokens import count_tokens

PRODUCER: Final = "agent"


def routes_on(next_role: AgentRole | str | None) -> bool:
    """True when ``next_role`` names a role to launch next (not the end, not "no route")."""
    return next_role is not None and str(next_role) != END


def _short(problem: str, paths: GroupPaths) -> str:
    """A problem's message with the repository's own prefix left out (it is long)."""
    return problem.replace(str(paths.repo) + os.sep, "")


async def record_return(
    store: Store,
    *,
    paths: GroupPaths,
    launch: RoleLaunch,
    parsed: ParsedReturn,
    next_role: AgentRole | str | None,
    run_id: str | None,
    conversation_id: str | None,
    now: datetime,
) -> ReturnStep:
    """Register ``launch``'s hand-off file (when valid) and record its step.

    ``parsed`` is the judged final message and ``next_role`` its route (a role,
    ``end``, or None). The step keeps what the primary is answered: a valid return
    that routes on without a usable hand-off file is recorded as ``no_handoff``
    (with no next role). ``paths`` must be the launch's session and group.
    """
    if (paths.session, paths.group) != (launch.artifacts_session, launch.group_id):
        raise ValueError("record_return: paths and launch name different groups")
    role = launch.role
    path = paths.handoff_file(role)
    loaded: LoadedHandoff | None = None
    problem = ""
    try:
        loaded = await asyncio.to_thread(load_handoff, paths, role)
    except HandoffFileInvalid as exc:
        problem = _short(str(exc), paths)
    if loaded is not None and parsed.valid and loaded.handoff.status != parsed.answer.status:
        problem = (
            f"{paths.relative(path)} says {loaded.handoff.status[:60]!r}"
            f" but the return says {parsed.answer.status!r}"
        )
    if parsed.valid and routes_on(next_role) and problem:
        parsed = rejected(
            ReturnRule.NO_HANDOFF,
            problem,
            role,
            parsed.tokens,
            conversation_id,
            found=f"a valid {parsed.answer.status} return without a usable hand-off file",
        )
    document_id = None
    if loaded is not None:
        document = await _register(store, paths, loaded, now, run_id, conversation_id, PRODUCER)
        document_id = document.document_id
    return await store.returns.add(
        NewReturnStep(
            artifacts_session=paths.session,
            group_id=paths.group,
            role=role,
            status=parsed.answer.status,
            # The lines come from the agent: a key it echoed is not kept.
            summary=tuple(redact(line) for line in parsed.answer.summary),
            created_us=to_us(now),
            run_id=run_id,
            conversation_id=conversation_id,
            document_id=document_id,
            # Only a file that is there (valid or not) is named: a step that wrote
            # none (a final one needs none) names none.
            handoff_path=str(path) if loaded is not None or await _there(path) else None,
            next_role=str(next_role) if parsed.valid and next_role is not None else None,
            rule=parsed.rule.value if parsed.rule is not None else None,
            reason=redact(parsed.reason) if parsed.reason else parsed.reason,
            tokens=parsed.tokens,
        )
    )


async def _there(path: Path) -> bool:
    """Whether anything is at ``path`` (a link is not followed)."""
    return await asyncio.to_thread(os.path.lexists, path)


async def on_disk(steps: Sequence[ReturnStep]) -> list[ReturnStep]:
    """``steps`` as they stand now: a hand-off file removed since its step was recorded
    is named no more (:func:`core.returns.display.handoff_words` says so)."""
    named = {s.handoff_path for s in steps if s.handoff_path}
    there = await asyncio.to_thread(lambda: {p for p in named if os.path.lexists(p)})
    return [
        s if s.handoff_path is None or s.handoff_path in there else replace(s, handoff_path=None)
        for s in steps
    ]


async def _register(
    store: Store,
    paths: GroupPaths,
    loaded: LoadedHandoff,
    now: datetime,
    run_id: str | None,
    conversation_id: str | None,
    producer: str,
) -> ContextDocument:
    previous_id = await store.returns.latest_document(paths.session, paths.group)
    return await store.documents.register(
        NewDocument(
            document_id=str(uuid.uuid4()),
            kind=DocumentKind.RETURN,
            path=str(loaded.path),
            created_us=to_us(now),
            digest=digest(loaded.text),
            source_session=conversation_id,
            run_id=run_id,
            previous_id=previous_id,
            status=DocumentStatus.FINAL,
            producer=producer,
            token_estimate=await asyncio.to_thread(count_tokens, loaded.text),
        )
    )


async def register_handoff(
    store: Store, *, paths: GroupPaths, role: AgentRole, now: datetime, producer: str = "person"
) -> ContextDocument:
    """Register ``role``'s hand-off file as it is now (written outside a run, e.g. by
    ``delegate returns write``); the row already there when the file is unchanged.

    Raises :class:`HandoffFileInvalid` when the file is missing or invalid.
    """
    loaded = await asyncio.to_thread(load_handoff, paths, role)
    known = await store.documents.by_path(str(loaded.path))
    if (
        known is not None
        and known.kind is DocumentKind.RETURN
        and known.digest == digest(loaded.text)
    ):
        return known
    return await _register(store, paths, loaded, now, None, None, producer)


def answer_of(step: ReturnStep) -> CompactReturn:
    """What the primary was answered for ``step`` (its status and three lines)."""
    lines = (*step.summary, "", "", "")[:3]
    return CompactReturn(step.status, (lines[0], lines[1], lines[2]))


async def group_steps(store: Store, session: str, group: str | None = None) -> list[ReturnStep]:
    """The session's steps (of ``group`` when given), by group then seq; raises
    :class:`ReturnGroupUnknown` when none are recorded."""
    steps = await on_disk(await store.returns.for_session(session, group))
    if not steps:
        which = f"group {group!r} of " if group is not None else ""
        raise ReturnGroupUnknown(
            f"no compact returns are recorded for {which}artifacts session {session!r};"
            " `delegate returns show` lists the sessions recorded"
        )
    return steps
