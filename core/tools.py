"""The JSON tools a primary agent calls: ``delegate_sessions`` and ``delegate_agent``.

Requests and responses follow seed 001 section 2 exactly. Every failure comes
back as ``{"status": "error", "error": {"code", "message"}}``; nothing raises.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from core.capsules.launch import CapsuleAcceptance
from core.chains.request import chain_request
from core.errors import ArtifactIdUnsafe, DelegateError, InternalError, InvalidRequest
from core.events import CapsuleGap
from core.models import AgentRequest, Run, RunKind, SessionScope, SessionsRequest, SessionState
from core.orchestrator import AgentOrchestrator
from core.redact import redact_data
from core.requests import validate
from core.returns.launch import repo_relative
from core.returns.model import ReturnRule, ReturnStep, RoleLaunch
from core.returns.parse import rejected
from core.returns.paths import check_artifact_id, new_artifacts_session
from core.returns.schemas import role_of
from core.runs.handle import RunHandle

RawRequest = str | bytes | dict[str, Any]

TOOL_NAMES = ("delegate_sessions", "delegate_agent")

log = logging.getLogger(__name__)


def parse_request(raw: RawRequest) -> dict[str, Any]:
    """Decode a request given as JSON text (or already decoded)."""
    if isinstance(raw, dict):
        return raw
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # bad JSON, bad encoding, absurd nesting
        raise InvalidRequest(f"request is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidRequest("request must be a JSON object")
    return data


async def delegate_sessions(orch: AgentOrchestrator, raw: RawRequest) -> dict[str, Any]:
    """List or search sessions, page one's messages, archive, restore, rename or purge one,
    report its context, or stop its run.

    ``list`` answers every session (sub-agents too, each with its ``parent_id``)
    of the reusable pool, or of the archive with ``archived``.
    """
    try:
        request = validate(SessionsRequest, parse_request(raw))
        if request.operation == "list":
            scope = SessionScope(top_level=False, archived=request.archived, sort=request.sort)
            page = await orch.list_sessions(request.limit or 3, request.cursor, scope=scope)
            return page.model_dump(mode="json")
        if request.operation == "search":
            assert request.query is not None
            found = await orch.search_sessions(
                request.query,
                request.limit or 10,
                request.cursor,
                scope=SessionScope(top_level=False),  # what the list covers
            )
            return found.model_dump(mode="json")
        if request.operation == "stop":
            return await stop_run(orch, request)
        if request.operation == "capsule_gaps":
            gaps = await orch.capsule_gaps(request.conversation_id, request.limit or 10)
            return {"gaps": [gap_payload(g) for g in gaps]}
        assert request.conversation_id is not None
        if request.operation == "messages":
            messages = await orch.recent_messages(
                request.conversation_id, request.limit or 10, request.cursor
            )
            return messages.model_dump(mode="json")
        cid = request.conversation_id
        if request.operation == "context":
            from core.context.report import report_payload

            return {"context": report_payload(await orch.context_report(cid))}
        if request.operation == "restore":
            await orch.restore(cid)
        elif request.operation == "rename":
            await orch.rename(cid, request.name)
        elif request.operation == "purge":
            await orch.purge(cid, force=request.force)
        else:
            await orch.dismiss(cid)
        return {"status": "ok"}
    except DelegateError as exc:
        return exc.to_payload()


async def stop_run(orch: AgentOrchestrator, request: SessionsRequest) -> dict[str, Any]:
    """Stop a run in flight, whichever process drives it (as ``delegate runs stop``).

    Named by ``run_id`` (``unknown_run``) or its session's ``conversation_id``
    (``unknown_conversation``); ``not_running`` when nothing is in flight. The answer
    says how it ended: ``cancelled``, ``stopped``, ``signalled``, ``requested`` or
    ``interrupted`` (see docs/runs.md).
    """
    if request.run_id is not None:
        target = (await orch.get_run(request.run_id)).run_id
    else:
        assert request.conversation_id is not None
        target = await orch.resolve_id(request.conversation_id)
    outcome = await orch.stop_run(target)
    return {
        "status": "ok",
        "run_id": outcome.run_id,
        "conversation_id": outcome.conversation_id,
        "how": outcome.how,
    }


def gap_payload(gap: CapsuleGap) -> dict[str, Any]:
    """A capsule gap as the tool answers it: who reported it, about which capsule, and
    the main session it was told to."""
    return {
        "at": gap.at.isoformat(),
        "conversation_id": gap.conversation_id,
        "run_id": gap.run_id,
        "agent_id": gap.agent_id,
        "capsule_id": gap.document_id,
        "source_id": gap.source_id,
        "note": gap.note,
    }


async def _launch(
    orch: AgentOrchestrator,
    request: AgentRequest,
    *,
    conversation_id: str | None = None,
    roles: list[RoleLaunch] | None = None,
) -> list[RunHandle]:
    """Start what a ``delegate_agent`` request asks for: plain runs, or role runs
    (``roles``: a batch item's group is its launch's, not a run option)."""
    batch = None
    if request.batch:
        leave_out = {"group_id"} if roles is not None else set()
        batch = [b.model_dump(exclude_none=True, exclude=leave_out) for b in request.batch]
    return await orch.delegate(
        prompt=request.prompt,
        agent_id=request.agent_id,
        conversation_id=conversation_id,
        batch=batch,
        cwd=request.cwd,
        mode=request.mode,
        parent_id=request.parent_id,
        capsule=request.capsule,
        accept=CapsuleAcceptance(
            allow_secrets=request.allow_secrets, accept_stale=request.accept_stale
        ),
        roles=roles,
    )


def run_payload(handle: RunHandle, run: Run | None) -> dict[str, Any]:
    """A run as the tool answers it; ``run`` None: a detached run just handed to its worker."""
    body: dict[str, Any] = {
        "run_id": handle.run_id,
        "conversation_id": handle.conversation_id,
        "agent_id": handle.agent_id,
        "kind": handle.kind.value,
    }
    if handle.routed_from is not None:
        # The session named had handed off: the follow-up ran in its chain's newest.
        body.update(
            continued_in=handle.conversation_id, requested_conversation_id=handle.routed_from
        )
    if run is None:
        # A detached launch's session waits pending until its run completes.
        state = SessionState.PENDING if handle.kind is RunKind.LAUNCH else SessionState.RUNNING
        body.update(run_status="running", session_state=state.value)
        return body
    body.update(
        run_status=run.status.value,
        output=run.output,
        usage=run.usage.model_dump(mode="json"),
        duration_s=run.duration_s,
    )
    if run.error:
        body["error"] = run.error
    return with_turn_end(body, handle)


def with_turn_end(body: dict[str, Any], handle: RunHandle) -> dict[str, Any]:
    """``body`` with ``context``: the levels the turn crossed and the hand-off it made,
    when it crossed one (said once, like the history cell; nothing otherwise)."""
    from core.supervisor.turn_end import TurnEnd, turn_end_payload

    end = handle.turn_end
    if isinstance(end, TurnEnd) and end.worth_saying:
        body["context"] = turn_end_payload(end)
    return body


async def delegate_agent(orch: AgentOrchestrator, raw: RawRequest) -> dict[str, Any]:
    """Launch a delegate (or a batch), or follow up on ``conversation_id``.

    Standard runs are awaited and their reply returned. Detached runs (launch
    or follow-up) are handed to a worker process of their own and answered at
    once with ``run_status: running`` and ``session_state`` (``pending`` for a
    launch): the run goes on if this caller ends. Poll ``delegate_sessions``
    for Ready.
    """
    from core.supervisor.turn_end import judge_turns

    try:
        request = validate(AgentRequest, parse_request(raw))
        # No supervisor may be running: each turn acts on the levels it crosses itself.
        judge_turns(orch)
        if request.agent_role is not None:
            return await delegate_roles(orch, request)
        handles = await _launch(orch, request, conversation_id=request.conversation_id)
        runs = [None if h.detached else await h.wait() for h in handles]
        payloads = [run_payload(h, r) for h, r in zip(handles, runs, strict=True)]
        if request.batch is not None:
            return {"status": "ok", "runs": payloads}
        return {"status": "ok", **payloads[0]}
    except DelegateError as exc:
        return exc.to_payload()


async def artifacts_session_for(orch: AgentOrchestrator, request: AgentRequest) -> str:
    """The artifacts session a role launch writes into: the one named, else the parent
    session's id, else a new one (the response names it, for the group's next roles)."""
    if request.artifacts_session is not None:
        return check_artifact_id(request.artifacts_session, "artifacts session")
    if request.parent_id is not None:
        parent = await orch.resolve_id(request.parent_id)
        try:
            return check_artifact_id(parent, "artifacts session")
        except ArtifactIdUnsafe:
            pass  # an imported session's id may not name a folder: a new session then
    return new_artifacts_session(orch.clock())


async def delegate_roles(orch: AgentOrchestrator, request: AgentRequest) -> dict[str, Any]:
    """Launch a role for one group, or for each batch item's group, in parallel.

    Each delegate's prompt gets the hand-off protocol (and, when the group already has
    a return, the previous role's hand-off file to read first). The response carries
    each run's compact return, never its full text.
    """
    assert request.agent_role is not None
    role = role_of(request.agent_role)
    session = await artifacts_session_for(orch, request)
    groups = (
        [item.group_id for item in request.batch]
        if request.batch is not None
        else [request.group_id]
    )
    launches = []
    for group in groups:
        assert group is not None
        check_artifact_id(group, "group id")
        previous = await orch.previous_handoff(session, group)
        launches.append(RoleLaunch(role, session, group, previous))
    if request.chain:
        return await chain_request(orch, request, launches)
    handles = await _launch(orch, request, roles=launches)
    payloads = []
    for handle, launch in zip(handles, launches, strict=True):
        step = None
        if not handle.detached:
            await handle.wait()
            step = await orch.return_step(handle.run_id)
        payloads.append(return_payload(handle, launch, step))
    if request.batch is not None:
        return {"status": "ok", "runs": payloads}
    return {"status": "ok", **payloads[0]}


def return_payload(
    handle: RunHandle, launch: RoleLaunch, step: ReturnStep | None
) -> dict[str, Any]:
    """A role's run as the tool answers it: ids and its compact return, never its text.

    No display line: it would repeat the three lines the return already carries, and
    every token here lands in the primary's context (``delegate run`` prints one).

    ``step`` None for a detached run (its worker records the return when it ends).
    """
    body: dict[str, Any] = {
        "run_id": handle.run_id,
        "conversation_id": handle.conversation_id,
        "agent_id": handle.agent_id,
        "artifacts_session": launch.artifacts_session,
        "group_id": launch.group_id,
        "agent_role": launch.role.value,
    }
    if handle.detached:
        body.update(run_status="running", session_state=SessionState.PENDING.value)
        return body
    if step is None:  # recording failed (logged): the primary still gets the protocol's shape
        parsed = rejected(
            ReturnRule.EMPTY,
            "delegate could not record this return",
            launch.role,
            0,
            handle.conversation_id,
        )
        body.update(
            {"return": parsed.answer.payload()},
            next_role=None,
            handoff_file=None,
            rule=ReturnRule.EMPTY.value,
            reason=parsed.reason,
        )
        return body
    body.update(
        {"return": {"status": step.status, "summary": list(step.summary)}},
        next_role=step.next_role,
        # As the prompts name it: relative to the repository root (and short).
        handoff_file=repo_relative(step.handoff_path) if step.handoff_path else None,
    )
    if step.rule is not None:
        body.update(rule=step.rule, reason=step.reason)
    return with_turn_end(body, handle)


async def call_tool(orch: AgentOrchestrator, name: str, raw: RawRequest) -> dict[str, Any]:
    """Run one tool call; the answer is always a payload, with every secret masked.

    This is the tools' boundary (CLI ``tool``, MCP): an exception nothing else
    expected becomes one ``internal_error`` payload, never a traceback.
    """
    try:
        if name == "delegate_sessions":
            response = await delegate_sessions(orch, raw)
        elif name == "delegate_agent":
            response = await delegate_agent(orch, raw)
        else:
            choices = ", ".join(TOOL_NAMES)
            response = InvalidRequest(f"unknown tool {name!r}; use one of {choices}").to_payload()
    except Exception as exc:
        log.exception("tool %s failed", name)
        response = InternalError(exc).to_payload()
    result: dict[str, Any] = redact_data(response)
    return result


def is_error(response: dict[str, Any]) -> bool:
    return response.get("status") == "error"
