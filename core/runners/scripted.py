"""A deterministic runner: replies from a small script, or echoes the prompt.

Script file (TOML or JSON), first matching rule wins::

    delay = 0.05                 # seconds between streamed chunks (default: agent's)
    [[rules]]
    match = "(?i)fail"           # regular expression searched in the prompt
    fail = "tests exploded"      # the run fails with this error
    [[rules]]
    match = "."
    reply = "turn {turn}: done with {prompt}"
    tool = "shell"               # optional: emit a tool call before the reply
    gate = "/tmp/go"             # optional: after ``gate_after`` chunks (default 1),
    gate_after = 1               # wait until this file exists, then stream the rest
    context_tokens = 140000      # optional: report the context holds this many tokens

Placeholders: ``{prompt}``, ``{turn}``, ``{agent}``, ``{persona}``.
"""

from __future__ import annotations

import asyncio
import json
import re
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.config import AgentConfig
from core.errors import RunnerUnavailable
from core.models import Role, Usage
from core.runners.base import (
    MessageOut,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequest,
    RunStarted,
    TextDelta,
)
from core.tokens import count_tokens

GATE_POLL_S = 0.02
_ECHO = "[{persona}] turn {turn}: {prompt}"
_WORDS = re.compile(r"\S+\s*|\s+")


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: str = "."
    reply: str = _ECHO
    fail: str | None = None
    tool: str | None = None
    delay: float | None = Field(default=None, ge=0)
    # A reply that stops half way until a file appears: tests hold a run in
    # flight for exactly as long as they need, with no timing involved.
    gate: Path | None = None
    gate_after: int = Field(default=1, ge=0)
    # Simulated context usage: the agent reports its context holds this many
    # tokens after the run (tests drive a session past each threshold).
    context_tokens: int | None = Field(default=None, ge=0)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delay: float | None = Field(default=None, ge=0)
    rules: list[ScriptRule] = Field(default_factory=list)


def load_script(path: Path) -> Script:
    """Parse a TOML or JSON script; any problem names the file."""
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        script = Script.model_validate(raw)
        for rule in script.rules:
            re.compile(rule.match)
    except (OSError, ValueError, ValidationError, re.error) as exc:
        raise RunnerUnavailable(f"scripted runner: cannot use script {path}: {exc}") from exc
    return script


async def _wait_for_file(path: Path) -> None:
    while True:  # polled: a test or a person creates it from outside
        if path.exists():
            return
        await asyncio.sleep(GATE_POLL_S)


@dataclass(frozen=True, slots=True)
class ScriptedRunner:
    """Streams a scripted reply word by word, with an optional delay per chunk."""

    agent_id: str
    persona: str
    script: Script
    delay: float
    owns_transcript: ClassVar[bool] = False  # our store holds its conversation
    wants_history: ClassVar[bool] = False

    @classmethod
    def from_config(cls, agent_id: str, config: AgentConfig) -> ScriptedRunner:
        script = load_script(config.script) if config.script else Script()
        delay = script.delay if script.delay is not None else config.delay
        return cls(agent_id, config.persona or agent_id, script, delay)

    def _rule_for(self, prompt: str) -> ScriptRule:
        for rule in self.script.rules:
            if re.search(rule.match, prompt):
                return rule
        return ScriptRule()

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        rule = self._rule_for(request.prompt)
        delay = rule.delay if rule.delay is not None else self.delay
        if rule.fail is not None:
            await asyncio.sleep(delay)
            yield RunFailed(rule.fail)
            return
        if rule.tool:
            yield MessageOut(
                Role.TOOL,
                f"{rule.tool}: ok",
                tool={"name": rule.tool, "input": {"prompt": request.prompt[:200]}},
            )
        reply = rule.reply.format(
            prompt=request.prompt,
            turn=request.turn,
            agent=self.agent_id,
            persona=self.persona,
        )
        for index, chunk in enumerate(_WORDS.findall(reply)):
            if rule.gate is not None and index == rule.gate_after:
                await _wait_for_file(rule.gate)
            if delay:
                await asyncio.sleep(delay)
            yield TextDelta(chunk)
        yield MessageOut(Role.ASSISTANT, reply)
        prompt_tokens = await asyncio.to_thread(count_tokens, request.prompt)
        yield RunCompleted(
            Usage(
                input_tokens=request.context_tokens + prompt_tokens,
                output_tokens=count_tokens(reply),
            ),
            context_tokens=rule.context_tokens,
        )
