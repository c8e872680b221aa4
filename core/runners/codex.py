"""The ``codex`` runner: drive the OpenAI Codex CLI non-interactively.

Launch (stdin at /dev/null: ``codex exec`` reads a piped stdin as more prompt)::

    codex exec --json [args] -- PROMPT

Follow-up (in the session's cwd)::

    codex exec --json [args] resume -- THREAD_ID PROMPT

Codex names a new conversation itself: the launch's ``thread.started`` carries
the thread id, which the runner reports as :class:`ConversationIdAssigned` so
the session is re-keyed to it and ``codex resume`` names the same conversation.

``turn.completed`` usage is cumulative over the whole thread, so the run's own
usage is the difference from the thread's total before the run, and the
context meter comes from the rollout Codex wrote: its latest
``last_token_usage.input_tokens`` against ``model_context_window``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from core import ids
from core.config import AgentConfig
from core.ids import is_valid_id, validate_id
from core.models import Role, Usage
from core.runners.base import (
    ConversationIdAssigned,
    MessageOut,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequest,
    RunStarted,
    TextDelta,
)
from core.runners.claude_code import failure_message
from core.runners.cli_stream import CliExit, CliStreamParser, stream_cli
from core.runners.subprocess import resolve_binary
from core.sources.common import INT64_MAX, clamp_int
from core.sources.safe_files import open_regular

ROLLOUT_TAIL_BYTES = 512 * 1024  # where the latest token count is looked for
TOOL_OUTPUT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """The latest ``token_count`` of a rollout."""

    total: Usage  # cumulative over the thread
    last_input_tokens: int
    last_output_tokens: int
    context_window: int | None


def _count(raw: Any) -> int:
    """A token figure from the rollout, in what SQLite can store (junk counts as 0)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw != raw:  # NaN
        return 0
    return clamp_int(int(min(raw, INT64_MAX)))


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=_count(raw.get("input_tokens")),
        output_tokens=_count(raw.get("output_tokens")),
    )


@dataclass
class CodexStreamParser(CliStreamParser):
    """Turns ``codex exec --json`` lines into run events; unknown lines are skipped.

    ``known_id``: the id the session has now; a thread id other than it is
    announced (:class:`ConversationIdAssigned`) once, on the line that names it.
    """

    thread_id: str | None = None
    usage: Usage | None = None  # from turn.completed (cumulative over the thread)
    errors: list[str] = field(default_factory=list)
    failed: str | None = None
    skipped: int = 0
    known_id: str | None = None
    _thread_seen: str | None = None  # the thread id after the line before

    @property
    def done(self) -> bool:
        return self.usage is not None or self.failed is not None

    def announcements(self) -> list[RunEvent]:
        new, had = self.thread_id, self._thread_seen
        self._thread_seen = new
        if new and new != had and new != self.known_id:
            return [ConversationIdAssigned(new)]
        return []

    def on_object(self, data: dict[str, Any]) -> list[RunEvent]:
        kind = data.get("type")
        if kind == "thread.started":
            thread_id = data.get("thread_id")
            if isinstance(thread_id, str) and is_valid_id(ids.CODEX, thread_id):
                self.thread_id = thread_id
            else:  # never adopt an id we could not pass back to ``codex exec resume``
                self.skipped += 1
        elif kind == "item.completed":
            return self._item(data.get("item"))
        elif kind == "turn.completed":
            self.usage = _usage(data.get("usage"))
        elif kind == "turn.failed":
            error = data.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            self.failed = str(message or "turn failed")
        elif kind == "error":
            self.errors.append(str(data.get("message") or "error"))
        elif kind not in ("turn.started", "item.started", "item.updated"):
            self.skipped += 1
        return []

    def _item(self, item: Any) -> list[RunEvent]:
        if not isinstance(item, dict):
            self.skipped += 1
            return []
        kind = item.get("type")
        if kind == "agent_message":
            text = str(item.get("text") or "")
            return [TextDelta(text), MessageOut(Role.ASSISTANT, text)] if text else []
        if kind == "command_execution":
            command = str(item.get("command") or "")
            output = str(item.get("aggregated_output") or "")[-TOOL_OUTPUT_CHARS:]
            return [
                MessageOut(
                    Role.TOOL,
                    f"$ {command}\n{output}".rstrip(),
                    tool={
                        "name": "shell",
                        "input": {"command": command},
                        "exit_code": item.get("exit_code"),
                        "status": item.get("status"),
                    },
                )
            ]
        if kind == "file_change":
            changes = [
                f"{c.get('kind', 'update')} {c.get('path', '?')}"
                for c in item.get("changes") or []
                if isinstance(c, dict)
            ]
            return [
                MessageOut(
                    Role.TOOL,
                    "files: " + ", ".join(changes),
                    tool={"name": "apply_patch", "input": {"changes": changes}},
                )
            ]
        if kind == "mcp_tool_call":
            name = f"{item.get('server', '?')}.{item.get('tool', '?')}"
            return [
                MessageOut(
                    Role.TOOL,
                    f"{name}: {item.get('status', '')}",
                    tool={"name": name, "input": item.get("arguments")},
                )
            ]
        if kind == "web_search":
            query = str(item.get("query") or "")
            return [
                MessageOut(
                    Role.TOOL,
                    f"web search: {query}",
                    tool={"name": "web_search", "input": {"query": query}},
                )
            ]
        if kind == "error":  # a warning item (e.g. unknown model metadata); the turn goes on
            return [MessageOut(Role.SYSTEM, str(item.get("message") or ""))]
        return []  # reasoning, todo lists: not part of the reply

    def finish(
        self,
        returncode: int,
        stderr: str,
        *,
        before: TokenInfo | None = None,
        after: TokenInfo | None = None,
    ) -> RunEvent:
        """The closing event; ``before``/``after`` are the rollout's token counts."""
        if self.failed is not None or self.usage is None:
            reason = self.failed or "; ".join(self.errors)
            what = (
                f"codex turn failed: {reason}"
                if reason
                else f"codex exited with code {returncode} before the turn completed"
            )
            return RunFailed(failure_message(what, stderr), stderr)
        total = self.usage
        if before is not None:
            total = Usage(
                input_tokens=max(0, total.input_tokens - before.total.input_tokens),
                output_tokens=max(0, total.output_tokens - before.total.output_tokens),
            )
        if after is not None:
            # As Codex itself (and our importer) measure it: the last request's input.
            context: int | None = after.last_input_tokens or None
            window = after.context_window
        else:
            # No rollout to read: a launch's usage is the best figure we have.
            context = self.usage.input_tokens if before is None else None
            window = None
        return RunCompleted(total, context_tokens=context, context_limit=window, stderr=stderr)


def codex_home(env: Mapping[str, str]) -> Path:
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"]).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".codex"


def find_rollout(home: Path, thread_id: str) -> Path | None:
    """The rollout file of a thread (``sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``).

    Only a thread id goes into the pattern: anything else could hold ``/``,
    ``..`` or glob characters.
    """
    if not is_valid_id(ids.CODEX, thread_id):
        return None
    matches = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
    return matches[-1] if matches else None


def latest_token_info(path: Path) -> TokenInfo | None:
    """The last ``token_count`` with figures, read from the end of the rollout only."""
    try:
        # The rollout is another program's file: a FIFO or device there must not block us.
        with open_regular(str(path)) as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - ROLLOUT_TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        if b'"token_count"' not in raw:
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # torn first line of the tail, a writer mid-append, absurd nesting
        payload = line.get("payload") if isinstance(line, dict) else None
        info = payload.get("info") if isinstance(payload, dict) else None
        if not isinstance(info, dict):
            continue
        last = info.get("last_token_usage")
        last = last if isinstance(last, dict) else {}
        window = info.get("model_context_window")
        return TokenInfo(
            total=_usage(info.get("total_token_usage")),
            last_input_tokens=_count(last.get("input_tokens")),
            last_output_tokens=_count(last.get("output_tokens")),
            context_window=clamp_int(window) if isinstance(window, int) and window > 0 else None,
        )
    return None


def _token_info(env: Mapping[str, str], thread_id: str | None) -> TokenInfo | None:
    if not thread_id:
        return None
    rollout = find_rollout(codex_home(env), thread_id)
    return latest_token_info(rollout) if rollout is not None else None


@dataclass(frozen=True, slots=True)
class CodexRunner:
    """Runs ``codex exec --json`` as a child process and streams its events."""

    agent_id: str
    binary: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    owns_transcript: ClassVar[bool] = True  # Codex writes the rollout
    wants_history: ClassVar[bool] = False

    @classmethod
    def from_config(cls, agent_id: str, config: AgentConfig) -> CodexRunner:
        env = {**os.environ, **config.env}
        binary = resolve_binary(config.binary or "codex", env, f"agents.{agent_id}.binary")
        return cls(agent_id, binary, tuple(config.args), env)

    def argv(self, request: RunRequest) -> list[str]:
        """The command line; after ``--`` the thread id and the prompt are never options.

        Before the separator, ``resume --last`` would continue another thread.
        """
        if not request.is_follow_up:
            # A sub-agent's share of its parent: Codex's developer instructions (a
            # TOML string: JSON's escapes are TOML's), for the thread it starts.
            shared = (
                ["-c", f"developer_instructions={json.dumps(request.system_prompt)}"]
                if request.system_prompt
                else []
            )
            return [self.binary, "exec", "--json", *shared, *self.args, "--", request.prompt]
        thread = validate_id(ids.CODEX, request.conversation_id)
        return [self.binary, "exec", "--json", *self.args, "resume", "--", thread, request.prompt]

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        before = (
            await asyncio.to_thread(_token_info, self.env, request.conversation_id)
            if request.is_follow_up
            else None
        )
        parser, exited = CodexStreamParser(known_id=request.conversation_id), CliExit()
        stream = stream_cli(
            self.argv(request), cwd=request.cwd, env=self.env, parser=parser, exited=exited
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event
        after = await asyncio.to_thread(
            _token_info, self.env, parser.thread_id or request.conversation_id
        )
        yield parser.finish(exited.returncode, exited.stderr, before=before, after=after)
