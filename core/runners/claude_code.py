"""The ``claude_code`` runner: drive the Claude Code CLI in print mode.

Launch::

    claude -p --output-format stream-json --verbose --session-id=CONVERSATION_ID [args] -- PROMPT

Follow-up (in the session's cwd)::

    claude -p --output-format stream-json --verbose --resume=CONVERSATION_ID [args] -- PROMPT

The conversation id delegate mints for a launch *is* Claude's ``sessionId``,
so our tools, the picker and ``claude --resume`` all name the same
conversation. Claude Code writes the transcript itself
(``~/.claude/projects/<munged-cwd>/<id>.jsonl``); the runner only streams what
happens and reports usage.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from core import ids
from core.config import AgentConfig
from core.ids import validate_id
from core.models import Role, Usage
from core.one_line import clipped
from core.runners.base import (
    MessageOut,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequest,
    RunStarted,
    TextDelta,
)
from core.runners.cli_stream import CliExit, CliStreamParser, stream_cli
from core.runners.subprocess import resolve_binary

ERROR_STDERR_CHARS = 2000  # how much of stderr a failure message quotes
TOOL_SUMMARY_CHARS = 200


# Claude Code's words when it has no credentials, and what a person does about it.
LOGIN_NEEDED = re.compile(r"(?i)not logged in|please run /login|invalid api key")
LOGIN_HINT = "to fix: run `claude /login`, or set ANTHROPIC_API_KEY"


def failure_message(what: str, stderr: str) -> str:
    """A run failure: what went wrong, then the end of the CLI's stderr if any."""
    tail = stderr.strip()[-ERROR_STDERR_CHARS:]
    return f"{what}\n{tail}" if tail else what


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clipped(text, TOOL_SUMMARY_CHARS)


def _input_side(usage: Mapping[str, Any]) -> int:
    """Prompt tokens of one API call: fresh input plus cache reads and writes."""
    return sum(
        int(usage.get(key) or 0)
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


@dataclass
class ClaudeStreamParser(CliStreamParser):
    """Turns ``--output-format stream-json`` lines into run events.

    Unknown line types and unparsable lines are skipped (counted in ``skipped``):
    the format is not a documented contract and grows new fields and types.
    """

    session_id: str | None = None
    skipped: int = 0
    result: dict[str, Any] | None = None
    _message_ids: list[str] = field(default_factory=list)
    _last_usage: dict[str, Any] = field(default_factory=dict)
    _texts: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.result is not None

    def on_object(self, data: dict[str, Any]) -> list[RunEvent]:
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == "init":
            self.session_id = data.get("session_id") or self.session_id
            return []
        if kind == "assistant":
            return self._assistant(data.get("message"))
        if kind == "user":
            return self._tool_results(data.get("message"))
        if kind == "result":
            self.result = data
            return []
        if kind not in ("system", "stream_event", "rate_limit_event"):
            self.skipped += 1
        return []

    def _assistant(self, message: Any) -> list[RunEvent]:
        if not isinstance(message, dict):
            self.skipped += 1
            return []
        # One API response may arrive as several lines repeating its id and usage.
        msg_id = message.get("id")
        if isinstance(msg_id, str) and msg_id not in self._message_ids:
            self._message_ids.append(msg_id)
        if isinstance(message.get("usage"), dict):
            self._last_usage = message["usage"]
        events: list[RunEvent] = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and block.get("text"):
                text = str(block["text"])
                self._texts.append(text)
                events += [TextDelta(text), MessageOut(Role.ASSISTANT, text)]
            elif block.get("type") == "tool_use":
                name = str(block.get("name") or "tool")
                tool_input = block.get("input") or {}
                events.append(
                    MessageOut(
                        Role.TOOL,
                        f"{name}: {_short(tool_input)}",
                        tool={"name": name, "input": tool_input, "id": block.get("id")},
                    )
                )
        return events

    def _tool_results(self, message: Any) -> list[RunEvent]:
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return []
        events: list[RunEvent] = []
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                events.append(
                    MessageOut(
                        Role.TOOL,
                        _short(_tool_result_text(block.get("content"))),
                        tool={
                            "tool_use_id": block.get("tool_use_id"),
                            "is_error": bool(block.get("is_error")),
                        },
                    )
                )
        return events

    def finish(self, returncode: int, stderr: str) -> RunEvent:
        """The closing event, once the stream has ended and the process exited."""
        result = self.result
        if result is None:
            return RunFailed(
                failure_message(f"claude exited with code {returncode} before a result", stderr),
                stderr,
            )
        subtype = result.get("subtype")
        if result.get("is_error") or subtype not in (None, "success"):
            detail = str(result.get("result") or "; ".join(map(str, result.get("errors") or [])))
            # A failed result can still say subtype "success": that word explains nothing.
            what = "claude reported an error" + (
                f" ({subtype})" if subtype not in (None, "success") else ""
            )
            what = f"{what}: {detail}" if detail else what
            if LOGIN_NEEDED.search(detail):
                what += f" ({LOGIN_HINT})"
            return RunFailed(failure_message(what, stderr), stderr)
        usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        run_usage = Usage(
            input_tokens=_input_side(usage), output_tokens=int(usage.get("output_tokens") or 0)
        )
        # The context in use is what the last model call read (its input side): with
        # one call, the result's totals are that call's exact usage.
        if len(self._message_ids) <= 1:
            context = run_usage.input_tokens
        else:
            context = _input_side(self._last_usage)
        return RunCompleted(run_usage, context_tokens=context or None, stderr=stderr)


# Characters a permission rule would read as a pattern or a separator, not a path.
_RULE_METACHARACTERS = frozenset("*?[]{}()\\!, \t\n\r")


def writable_rules(folders: Sequence[Path]) -> list[str]:
    """``--allowedTools=Edit(//ABS/**)`` per folder: file writes there need nobody's yes.

    ``claude -p`` has no one to ask, so a write it would ask about is refused. A
    rule names one folder by its absolute path (``//`` starts one); a folder whose
    path holds pattern characters would widen the rule, so it gets none.
    """
    rules = []
    for folder in folders:
        text = str(folder.resolve())
        if _RULE_METACHARACTERS.isdisjoint(text):
            rules.append(f"--allowedTools=Edit(//{text.lstrip('/')}/**)")
    return rules


@dataclass(frozen=True, slots=True)
class ClaudeCodeRunner:
    """Runs ``claude -p`` as a child process and streams its events."""

    agent_id: str
    binary: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    owns_transcript: ClassVar[bool] = True  # Claude Code writes the transcript
    wants_history: ClassVar[bool] = False  # ... and replays it on --resume

    @classmethod
    def from_config(cls, agent_id: str, config: AgentConfig) -> ClaudeCodeRunner:
        env = {**os.environ, **config.env}
        binary = resolve_binary(config.binary or "claude", env, f"agents.{agent_id}.binary")
        return cls(agent_id, binary, tuple(config.args), env)

    def argv(self, request: RunRequest) -> list[str]:
        """The command line; the id is glued to its option and the prompt follows ``--``.

        ``--resume`` takes an *optional* value, so ``--resume ID`` would read an
        id such as ``-p`` as the next option: ``--resume=ID`` cannot.
        """
        session = validate_id(ids.CLAUDE_CODE, request.conversation_id)
        which = "--resume" if request.is_follow_up else "--session-id"
        # A sub-agent's share of its parent: appended to Claude Code's own system
        # prompt at launch (glued to its option: text, never an option itself);
        # the session records it, so a resume does not send it again.
        shared = (
            [f"--append-system-prompt={request.system_prompt}"]
            if request.system_prompt and not request.is_follow_up
            else []
        )
        return [
            self.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            f"{which}={session}",
            *shared,
            *writable_rules(request.writable_dirs),
            *self.args,
            "--",  # a prompt starting with "-" is still the prompt
            request.prompt,
        ]

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        parser, exited = ClaudeStreamParser(), CliExit()
        stream = stream_cli(
            self.argv(request), cwd=request.cwd, env=self.env, parser=parser, exited=exited
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event
        yield parser.finish(exited.returncode, exited.stderr)
