"""Driving a run: the runner's events read, published and stored; the run closed whatever happens.

Owns the loop of one run in this process, from its task's start to its close.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING

from core import process_identity
from core.conversations.importing import TranscriptImports
from core.errors import RunnerUnavailable
from core.events import HistoryEvent, RunActivity, RunOutput
from core.models import Message, Role, Run, RunKind, RunStatus, Usage
from core.runs.closing import RunCloser
from core.runs.handle import CANCELLED_BY_USER, AfterTurn, RunHandle
from core.runs.in_flight import RunsInFlight, uncancellable
from core.runs.replies import RunReplies
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.live_activity import LiveActivity
    from core.runners import RunCompleted, RunFailed, RunRequest
    from core.runners.base import Runner

log = logging.getLogger(__name__)
ACTIVITY_INTERVAL_S = 0.25  # at most this often a run's live output is stored
# Stored messages sent to a stateless endpoint (openai_compat) with each prompt.
HISTORY_MESSAGES = 200


class RunDriver(Wing):
    """Start a run's task and drive its runner to the end."""

    def __init__(
        self,
        core: CoreServices,
        flight: RunsInFlight,
        replies: RunReplies,
        closer: RunCloser,
        imports: TranscriptImports,
        *,
        activity_interval_s: float,
    ) -> None:
        """``activity_interval_s``: how often at most a run's live output and stderr
        tail are stored."""
        super().__init__(core)
        self.flight = flight
        self.replies = replies
        self.closer = closer
        self.imports = imports
        self.activity_interval_s = activity_interval_s

    def start(
        self, request: RunRequest, runner: Runner, kind: RunKind, started: HistoryEvent
    ) -> RunHandle:
        """Create the run's task at once: from here on, the task owns closing the run."""
        handle = RunHandle(request.run_id, request.conversation_id, request.agent_id, kind)
        handle._task = asyncio.create_task(self._execute(handle, runner, request, started))
        self.flight.handles[request.run_id] = handle
        self.flight.keep_beating()
        return handle

    async def _execute(
        self, handle: RunHandle, runner: Runner, request: RunRequest, started: HistoryEvent
    ) -> Run:
        """Drive the runner, store what it says, and close the run whatever happens."""
        from core.live_activity import LiveActivity
        from core.runners import (
            ConversationIdAssigned,
            MessageOut,
            RunCompleted,
            RunFailed,
            StderrLine,
            TextDelta,
        )
        from core.runners.base import closing
        from core.runners.subprocess import on_process_started

        usage, status, error = Usage(), RunStatus.COMPLETED, None
        reply: list[str] = []
        streamed: list[str] = []  # text since the last whole assistant message
        ended: RunCompleted | RunFailed | None = None
        activity = LiveActivity(
            self.store.runs,
            request.run_id,
            lambda: "".join(reply) + "".join(streamed),
            interval_s=self.activity_interval_s,
            clock=self.clock,
        )
        handle._started = True
        try:
            if handle._cancel_requested:
                raise asyncio.CancelledError
            await self.emitter.emit(started)
            if runner.wants_history:
                request = dataclasses.replace(
                    request,
                    history=await self._history_before(request.conversation_id, request.run_id),
                )
            if runner.owns_transcript:
                # A CLI of an earlier run whose delegate died must not write the
                # conversation beside the one this run starts.
                await self._stop_orphaned_agents(request.conversation_id)
                run_id = request.run_id
                on_process_started.set(lambda pid: self._record_agent(run_id, pid))
            # aclosing: whatever ends the loop (a cancel, an error in its body),
            # the runner's generator is closed here, and with it the agent's
            # process group, before the run is stored closed.
            async with closing(runner.run(request)) as events:
                async for event in events:
                    handle._events.put_nowait(event)
                    if isinstance(event, TextDelta):
                        streamed.append(event.text)
                        activity.changed()
                        self.bus.publish(
                            RunOutput(
                                conversation_id=request.conversation_id,
                                run_id=request.run_id,
                                text=event.text,
                            )
                        )
                    elif isinstance(event, StderrLine):
                        activity.stderr_line(event.text)
                        self._publish_activity(request, activity)
                    elif isinstance(event, MessageOut):
                        if not runner.owns_transcript:
                            await self.replies.store_reply(request, event)
                        if event.role is Role.ASSISTANT:
                            reply.append(event.content)
                            streamed.clear()
                            activity.changed()
                    elif isinstance(event, ConversationIdAssigned):
                        request = await self._rekey(handle, request, event.external_id)
                    elif isinstance(event, RunCompleted):
                        usage, ended = event.usage, event
                    elif isinstance(event, RunFailed):
                        status, error, ended = RunStatus.FAILED, event.error, event
        except asyncio.CancelledError:
            status, error = RunStatus.CANCELLED, CANCELLED_BY_USER
        except RunnerUnavailable as exc:
            status, error = RunStatus.FAILED, exc.message
        except Exception as exc:  # a runner bug must not leave the session running
            status, error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
        finally:
            handle._events.put_nowait(None)
        await uncancellable(activity.close())
        partial = "".join(streamed) if status is not RunStatus.COMPLETED else ""
        run = await uncancellable(
            self.closer.close_run(
                request,
                status,
                usage,
                "".join(reply) + partial,
                error,
                ended,
                store_note=not runner.owns_transcript,
                partial=partial,
            )
        )
        role = self.flight.roles.pop(request.run_id, None)
        if role is not None:
            # The final message alone is the return (text said before a tool call is not).
            await uncancellable(self.closer.judge_return(role, run, reply[-1] if reply else ""))
        if runner.owns_transcript:
            # After the result is delivered: the caller's wait() does not pay for it.
            self.flight.after_run(self.imports.import_run_transcript(request))
        if self.flight.after_turn is not None and run.status is not RunStatus.CANCELLED:
            await self._end_turn(handle, self.flight.after_turn)
        return run

    async def _end_turn(self, handle: RunHandle, after_turn: AfterTurn) -> None:
        """Let ``after_turn`` act on the stored turn (a hand-off may take a while); never
        raises: the run is stored, and what went wrong is logged."""
        self.flight.ending[handle.run_id] = handle
        try:
            handle.turn_end = await after_turn(handle.conversation_id)
        except asyncio.CancelledError:
            log.info("acting on the end of run %s was cancelled", handle.run_id)
        except Exception:
            log.exception("acting on the end of run %s failed", handle.run_id)
        finally:
            self.flight.ending.pop(handle.run_id, None)

    async def _rekey(self, handle: RunHandle, request: RunRequest, new_id: str) -> RunRequest:
        """Adopt the conversation id the agent chose (a Codex thread id)."""
        try:
            await self.store.sessions.rekey(request.conversation_id, new_id)
        except Exception:  # e.g. a session of delegate's own holds that id: keep ours
            log.exception("cannot re-key %s to %s", request.conversation_id, new_id)
            return request
        handle.conversation_id = new_id
        return dataclasses.replace(request, conversation_id=new_id)

    async def _history_before(self, conversation_id: str, run_id: str) -> list[Message]:
        """The newest stored messages before this run, oldest first."""
        messages, _ = await self.store.messages.recent(conversation_id, HISTORY_MESSAGES + 1)
        return [m for m in reversed(messages) if m.run_id != run_id][-HISTORY_MESSAGES:]

    def _publish_activity(self, request: RunRequest, activity: LiveActivity) -> None:
        self.bus.publish(
            RunActivity(
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                stderr_tail=activity.stderr_tail,
                live_output=activity.live_output,
                at=self.clock(),
            )
        )

    async def _record_agent(self, run_id: str, pid: int) -> None:
        """Remember the CLI a run started, for whoever finds the run orphaned."""
        await self.store.runs.record_agent_process(run_id, pid, process_identity.start_time(pid))

    async def _stop_orphaned_agents(self, conversation_id: str) -> None:
        from core.runners.subprocess import stop_orphan

        for agent in await self.store.runs.orphaned_agents(conversation_id):
            if await asyncio.to_thread(stop_orphan, agent.pid, agent.started):
                log.warning(
                    "stopped agent process %d left running by run %s", agent.pid, agent.run_id
                )
