"""``delegate mcp``: the JSON tools served over MCP (stdio) with the official SDK.

The two tools are exactly :mod:`core.tools`: same request models (their JSON
schemas are the tools' input schemas), same payloads. A payload is returned as
JSON text and as structured content; an error payload
(``{"status": "error", ...}``) comes back as a tool result with ``isError``
set, never as a protocol error or a crash.

stdout is the transport: while serving, the SDK points fd 1 at stderr, and our
logging goes to stderr. The orchestrator is opened once, in the server's event
loop, and closed when the client goes away.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from core.errors import DelegateError, InternalError
from core.models import AgentRequest, SessionsRequest
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool, is_error

log = logging.getLogger("delegate.mcp")

SERVER_NAME = "delegate"
# Runs still in flight when the client disconnects get this long to finish
# (under the 2 s an MCP client waits after closing stdin), then are cancelled.
SHUTDOWN_GRACE_S = 1.5

INSTRUCTIONS = """\
delegate keeps coding-agent delegate sessions so you can reuse them instead of \
starting over. The flow:
1. delegate_sessions {"operation": "list"} to see reusable sessions, newest first \
(follow next_cursor for more).
2. Only when you really need the context: delegate_sessions {"operation": "messages", \
"conversation_id": ...} (newest first; follow next_cursor to page back).
3. delegate_agent {"conversation_id": ..., "prompt": ...} to follow up in that \
session (a fresh run_id each call, same conversation), or delegate_agent \
{"prompt": ...} to launch a new delegate.
4. delegate_sessions {"operation": "dismiss", "conversation_id": ...} when you are done \
with a session; {"operation": "stop", "conversation_id": ...} stops a run that should not \
go on.
Errors come back as {"status": "error", "error": {"code", "message"}}; agent_busy means \
the delegate is still running: wait and retry.\
"""

SESSIONS_DESCRIPTION = """\
Discover, search, preview, dismiss (archive), restore, rename and purge delegate \
sessions; stop a run.
- {"operation": "list", "limit"?: 1..100, "cursor"?, "archived"?, "sort"?} -> \
{"sessions": [...], "next_cursor"}: newest last_interacted_at first (default 3 per \
page; "sort": "created" for newest created first; "archived": true lists the archive). \
Each session has conversation_id, agent_id, mode, state (idle|running|pending|ready), \
cwd, title, name, parent_id (a sub-agent's session), metrics, context use and \
last_run_status. Pass next_cursor back as cursor for the next page; null means no more.
- {"operation": "messages", "conversation_id", "limit"?, "cursor"?} -> \
{"messages": [...], "next_cursor"}: that session's messages newest first (default 10). \
Use it only when you need the context before a follow-up; nothing is sent to you \
automatically.
- {"operation": "search", "query", "limit"?, "cursor"?} -> {"results": [...], \
"next_cursor"}: sessions whose title, prompts or replies match the query (words, \
"phrases", prefix*, agent:, state:, branch:, cwd:), best first (default 10); each \
result has the session and a snippet with the matched words' offsets.
- {"operation": "dismiss", "conversation_id"} -> {"status": "ok"}: move the session \
out of the reusable pool into the archive once you are done with it (kept; restorable).
- {"operation": "restore", "conversation_id"}: bring an archived session back.
- {"operation": "rename", "conversation_id", "name"}: name it (one line, at most 200 \
characters; null clears).
- {"operation": "purge", "conversation_id", "force"?}: free what is stored for an \
archived session (force: one still in the pool); it never comes back from an import.
- {"operation": "stop", "conversation_id"} or {"operation": "stop", "run_id"} -> \
{"status": "ok", "run_id", "conversation_id", "how"}: stop the session's run in flight \
(or that run), whichever process drives it (another delegate run, a detached worker, a \
panel); how: cancelled, stopped, signalled, requested (its owner stops it on its next \
heartbeat) or interrupted (its owner was gone).
- {"operation": "capsule_gaps", "conversation_id"?, "limit"?} -> {"gaps": [{"at", \
"conversation_id", "run_id", "agent_id", "capsule_id", "source_id", "note"}]}: what \
sub-agents launched with a context capsule said it lacked ("Capsule Gap:" lines), newest \
first (default 10); with conversation_id, those told to that session (source_id, which \
also gets them in its next prompt) or reported by it.
Errors: invalid_request (the message names the field), invalid_cursor, \
unknown_conversation, unknown_run, not_running (stop: nothing in flight), \
dismiss_refused, has_dependants (purge: other sessions depend on it; \
error.dependants lists them; force purges anyway)."""

AGENT_DESCRIPTION = """\
Launch a delegate, or follow up on an existing session.
- Follow-up: {"conversation_id": <from delegate_sessions list>, "prompt"}. The prompt \
continues that conversation; agent_id defaults to the session's. Returns a new run_id \
in the same conversation_id, with run_status, output and usage.
- Launch: {"prompt", "agent_id"?, "cwd"?, "mode"?: "standard"|"detached", \
"parent_id"?}, or {"batch": [{"prompt", "agent_id"?, "cwd"?}, ...]} for several at once. \
parent_id launches a sub-agent of that session: its own context window, starting with \
the parent's system and context messages. "capsule": "latest" or a path (launches \
only) injects that context capsule into the first prompt after the task; it is refused \
(capsule_invalid, capsule_has_secrets, capsule_stale, capsule_not_found; error.problems \
lists why) unless "allow_secrets" / "accept_stale" accept it. Standard runs \
are awaited and return the reply; "mode": "detached" (launch or follow-up) runs in a \
background process of its own that outlives this server and returns at once with \
run_status "running" and session_state: list sessions until its state is "ready" \
before following up (a failed detached launch rests "idle": a follow-up retries it).
- Context: a run whose turn crossed a context level (50/60/70/90 % of the session's \
window by default) answers "context": {"percent", "level", "crossed", "handoff"}; at \
the hand-off level the session hands off in that call ("handoff": {"path", \
"continued_in", "pending", "failure", ...}) and a follow-up to its id runs in \
"continued_in" (the answer's continued_in says so). context_exhausted: the session is \
past its force level and was not continued; the message says how to continue it.
- Roles (compact returns): add "agent_role" (developer, qa_expert, tech_lead, \
project_manager, senior_software_engineer, investigator, requirements_engineer) and \
"group_id" (in a batch: each item's "group_id", one group each, run in parallel), \
optionally "artifacts_session" (default: parent_id, else a new one). The delegate \
writes its details to a hand-off file and answers only its status: the response is \
run_id, conversation_id, artifacts_session, group_id, agent_role, "return": {"status", \
"summary": [3 lines]}, next_role and handoff_file (relative to the repository root), \
never its output. \
Launch the group's next role with the same artifacts_session and group_id: it reads the \
previous hand-off file first. "return".status INVALID_RETURN (with rule and reason) \
means the delegate broke the protocol: nothing routes on, its full text is in \
delegate_sessions messages. "chain": true lets delegate launch each next role itself.
conversation_id and batch are mutually exclusive. Error agent_busy ("delegate still \
running") means the session is running another prompt: wait, then retry the same \
call. session_not_ready: the detached session is still pending. unknown_conversation: \
list sessions again. unknown_agent: the message lists the configured agents."""


def tool_definitions() -> list[types.Tool]:
    """The two tools, with input schemas generated from the request models."""
    return [
        types.Tool(
            name="delegate_sessions",
            title="Delegate sessions",
            description=SESSIONS_DESCRIPTION,
            input_schema=SessionsRequest.model_json_schema(),
            annotations=types.ToolAnnotations(
                title="Delegate sessions: list, messages, dismiss, stop",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=False,
            ),
        ),
        types.Tool(
            name="delegate_agent",
            title="Delegate agent",
            description=AGENT_DESCRIPTION,
            input_schema=AgentRequest.model_json_schema(),
            annotations=types.ToolAnnotations(
                title="Delegate agent: launch or follow up",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=True,
            ),
        ),
    ]


def tool_result(payload: dict[str, Any]) -> types.CallToolResult:
    """A core.tools payload as an MCP result: JSON text, structured content, isError."""
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=payload,
        is_error=is_error(payload),
    )


@dataclass
class ServerState:
    """What the handlers share: the open orchestrator, or why it could not open."""

    orch: AgentOrchestrator | None = None
    open_error: DelegateError | None = None


def _lifespan_for(data_dir: Path) -> Any:
    @asynccontextmanager
    async def lifespan(_server: Server[ServerState]) -> AsyncIterator[ServerState]:
        state = ServerState()
        try:
            state.orch = await AgentOrchestrator.open(data_dir, owner_kind="mcp")
        except Exception as exc:
            # Keep serving: every call answers with this error, which tells the
            # primary agent (and its user) what to fix better than a dead server.
            error = exc if isinstance(exc, DelegateError) else InternalError(exc)
            log.error("cannot open %s: %s: %s", data_dir, error.code, error.message)
            state.open_error = error
        try:
            yield state
        finally:
            if state.orch is not None:
                with anyio.CancelScope(shield=True):
                    await _shutdown(state.orch)

    return lifespan


async def _shutdown(orch: AgentOrchestrator) -> None:
    waits = [asyncio.ensure_future(handle.wait()) for handle in orch.running()]
    if waits:
        await asyncio.wait(waits, timeout=SHUTDOWN_GRACE_S)
        for pending in waits:
            pending.cancel()
    await orch.close(wait=False)


async def _list_tools(
    _ctx: ServerRequestContext[ServerState], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=tool_definitions())


async def _call_tool(
    ctx: ServerRequestContext[ServerState], params: types.CallToolRequestParams
) -> types.CallToolResult:
    state = ctx.lifespan_context
    if state.orch is None:
        assert state.open_error is not None
        return tool_result(state.open_error.to_payload())
    try:
        payload = await call_tool(state.orch, params.name, params.arguments or {})
    except Exception as exc:  # a bug, not a tool error: report it, keep serving
        log.exception("tool %s failed", params.name)
        payload = InternalError(exc).to_payload()
    return tool_result(payload)


def build_server(data_dir: Path) -> Server[ServerState]:
    try:
        server_version = version("delegate")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        server_version = "0"
    return Server(
        SERVER_NAME,
        version=server_version,
        title="delegate",
        instructions=INSTRUCTIONS,
        lifespan=_lifespan_for(data_dir),
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )


async def serve(data_dir: Path, *, on_stopped: Callable[[], None] | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin.

    ``on_stopped`` runs once the server has stopped and the orchestrator is
    closed, before the transport waits for its stdin reader to finish.
    """
    server = build_server(data_dir)
    async with stdio_server() as (read_stream, write_stream):
        try:
            await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            if on_stopped is not None:
                on_stopped()


async def _serve_process(data_dir: Path) -> None:
    """``serve`` for the ``delegate mcp`` process: SIGTERM closes the store and exits."""
    main_task = asyncio.current_task()
    terminated = False

    def on_sigterm() -> None:
        nonlocal terminated
        terminated = True
        if main_task is not None:
            main_task.cancel()

    with suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, on_sigterm)

    def exit_if_terminated() -> None:
        if terminated:
            # The orchestrator is closed (the lifespan ran); the thread reading stdin
            # would hold the exit until stdin closes, so leave now.
            logging.shutdown()
            sys.stderr.flush()
            os._exit(0)

    await serve(data_dir, on_stopped=exit_if_terminated)


def main(data_dir: Path) -> int:
    """Entry point of ``delegate mcp``; logs go to stderr, never to stdout."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="delegate mcp: %(levelname)s %(message)s"
    )
    with suppress(KeyboardInterrupt):  # ctrl+c: the store is closed on the way out
        asyncio.run(_serve_process(data_dir))
    return 0
