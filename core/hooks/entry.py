"""One hook call, answered within its budget whatever it is fed and whatever else runs.

``delegate hook AGENT EVENT`` is run by an agent CLI that waits for it: Claude Code
holds its turn until the ``Stop`` hook exits. So the call is answered within
:data:`HOOK_BUDGET_S` and never fails its agent: its input is read within bounds
(:mod:`core.hooks.payload`), its work (:mod:`core.hooks.handler`) runs in a thread of
its own that the answer does not wait for past the budget, the import lock is never
waited for (another import holds it: the work is deferred), and on any problem --
input refused, store busy or broken, disk full, an unknown event, the budget spent,
a bug -- the answer is "go on" (exit 0 and nothing on stdout: Claude Code continues;
Codex's ``notify`` exits 0; Codex does not wait for it, so its bound is
:data:`NOTIFY_BUDGET_S`), with the reason in the hook log
(:mod:`core.hooks.hook_log`) and, when work was left undone, the session queued for
the supervisor (:mod:`core.supervisor.hook_queue`).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import ids
from core.errors import DelegateError, HookInputRefused, ImportBusy
from core.hooks.hook_log import log_problem
from core.hooks.payload import parse_payload
from core.supervisor.hook_queue import QueuedHook, defer

HOOK_BUDGET_S = 1.0
"""How long a Claude Code hook call may take once delegate's code runs (the interpreter's
own start comes before). Claude Code waits for its hooks before the turn ends and the
person may type again: a turn must never feel slower by more than a moment, and a hook's
usual work (one transcript's new lines, one threshold check) takes a fifth of it."""
NOTIFY_BUDGET_S = 20.0
"""The bound on a Codex ``notify`` call: Codex starts it and goes on without waiting, so
it may finish its work (a hand-off built from facts takes a few seconds on a busy
machine); the bound only keeps a stuck call from lingering."""
BUDGET_ENV = "DELEGATE_HOOK_BUDGET_S"
"""Seconds that replace :data:`HOOK_BUDGET_S` (a slow machine), within 0.1 to 60."""
CLAUDE_EVENTS = frozenset({"Stop", "SessionStart", "UserPromptSubmit"})
"""The Claude Code events delegate answers; others are let through and logged."""
CODEX_EVENTS = frozenset({"notify"})


@dataclass
class HookAnswer:
    """What the hook process says: ``stdout`` for the agent ("" lets it go on), always
    exit status 0. ``finished`` False: the work still runs in its thread (a CLI then
    exits without waiting for it). ``problem``: why the agent was let go on, if so."""

    stdout: str = ""
    finished: bool = True
    problem: str | None = None
    elapsed_s: float = 0.0
    exit_code: int = 0


@dataclass
class _Call:
    """What the worker thread found out, read by the caller once it is done or late."""

    session_id: str | None = None
    answer: dict[str, Any] | None = None
    problem: str | None = None
    deferred: bool = False
    done: threading.Event = field(default_factory=threading.Event)


def hook_budget(agent: str, environ: Mapping[str, str] | None = None) -> float:
    """The budget of a hook call of ``agent`` (``$DELEGATE_HOOK_BUDGET_S`` for Claude Code
    when it is a number of seconds in range; an unusable value is ignored)."""
    if agent == ids.CODEX:
        return NOTIFY_BUDGET_S
    raw = (os.environ if environ is None else environ).get(BUDGET_ENV, "")
    try:
        chosen = float(raw)
    except ValueError:
        return HOOK_BUDGET_S
    return chosen if 0.1 <= chosen <= 60 else HOOK_BUDGET_S


def answer_hook(
    data_dir: Path,
    agent: str,
    event: str,
    read_input: Callable[[], bytes],
    *,
    budget_s: float | None = None,
    claude_dir: Path | None = None,
    codex_dir: Path | None = None,
) -> HookAnswer:
    """Run one hook call; its answer within ``budget_s`` (plus a thread's start).

    ``read_input``: the event's JSON as bytes (stdin, or the argument Codex passed).
    ``budget_s`` None: :func:`hook_budget`.
    """
    started = time.monotonic()
    if budget_s is None:
        budget_s = hook_budget(agent)
    call = _Call()

    def work() -> None:
        try:
            asyncio.run(_handle(call, data_dir, agent, event, read_input, claude_dir, codex_dir))
        except BaseException as exc:  # the boundary of a hook: named, never raised
            call.problem = call.problem or f"{type(exc).__name__}: {exc}"
            call.deferred = call.session_id is not None
        finally:
            call.done.set()

    worker = threading.Thread(target=work, name=f"delegate hook {agent} {event}", daemon=True)
    worker.start()
    finished = call.done.wait(budget_s)
    answer = HookAnswer(finished=finished, elapsed_s=time.monotonic() - started)
    if not finished:
        answer.problem = f"over its {budget_s:g} s budget: the agent goes on"
        deferred = call.session_id is not None
    else:
        answer.problem = call.problem
        deferred = call.deferred
        if call.answer is not None and call.problem is None:
            answer.stdout = json.dumps(call.answer) + "\n"
    if answer.problem is not None:
        if deferred and call.session_id is not None:
            queued = defer(data_dir, QueuedHook(agent, event, call.session_id))
            answer.problem += (
                "; its work is queued for the supervisor"
                if queued
                else "; the queue is full or unwritable (the supervisor's re-scan catches up)"
            )
        log_problem(data_dir, agent, event, answer.problem)
    answer.elapsed_s = time.monotonic() - started
    return answer


async def _handle(
    call: _Call,
    data_dir: Path,
    agent: str,
    event: str,
    read_input: Callable[[], bytes],
    claude_dir: Path | None,
    codex_dir: Path | None,
) -> None:
    """Read, check and do one hook's work, noting on ``call`` what happened."""
    try:
        payload = parse_payload(read_input())
    except HookInputRefused as exc:
        call.problem = f"{exc.code}: {exc.message}"
        return
    known = CLAUDE_EVENTS if agent == ids.CLAUDE_CODE else CODEX_EVENTS
    if event not in known:
        call.problem = f"the event {event!r} is not one delegate handles: let through"
        return
    from core.continuation.handoff_pipeline import HandoffPipeline  # deferred: input checked
    from core.continuation.service import Continuation
    from core.hooks.handler import ClaudeCodeHooks, ClaudeHookInput, codex_thread, on_codex_notify
    from core.orchestrator import AgentOrchestrator

    try:
        if agent == ids.CLAUDE_CODE:
            hook = ClaudeHookInput.from_payload(event, payload)
            call.session_id = hook.session_id
        else:
            thread_id = codex_thread(payload)
            if thread_id is None:
                return  # another notification: nothing to judge
            call.session_id = thread_id
    except DelegateError as exc:
        call.problem = f"{exc.code}: {exc.message}"
        return
    try:
        orch = await AgentOrchestrator.open(data_dir)
    except DelegateError as exc:
        call.problem, call.deferred = f"{exc.code}: {exc.message}", True
        return
    try:
        steps = HandoffPipeline.of(orch)  # one pipeline, for the agent's and from facts
        continuation = Continuation(orch, pipeline=steps)  # when the agent's is unusable
        if agent == ids.CLAUDE_CODE:
            handler = ClaudeCodeHooks(
                orch,
                claude_dir=claude_dir,
                continuation=continuation,
                wait_for_import=False,
                pipeline=steps,
            )
            call.answer = await handler.answer(hook)
        else:
            await on_codex_notify(
                orch, payload, codex_dir=codex_dir, continuation=continuation, wait=False
            )
    except ImportBusy as exc:
        call.problem, call.deferred = f"deferred: {exc.message}", True
    except DelegateError as exc:
        call.problem, call.deferred = f"{exc.code}: {exc.message}", True
    finally:
        await orch.close()
