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
    [[rules.write]]              # optional: files written before the reply (its Write tool)
    path = "out/{name}.json"     # relative to the run's folder, and never outside it
    content = '{"done": true}'

Placeholders, in ``reply`` and in each write's ``path`` and ``content``: ``{prompt}``,
``{turn}``, ``{agent}``, ``{persona}``, and each named group of ``match``
(``(?P<name>...)``). Only those names are replaced; every other brace is kept as
written, so a reply or a file can be JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import stat
import tomllib
import uuid
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
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
WRITE_TOOL = "Write"  # the tool call a write shows as, like an agent CLI's


class ScriptWrite(BaseModel):
    """A file a rule writes before it replies (an agent's Write tool)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    content: str = ""


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
    write: list[ScriptWrite] = Field(default_factory=list)


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


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced; other braces kept."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


class WriteRefused(Exception):
    """A scripted write that would leave the run's folder or replace something else."""


def write_in(cwd: Path, relative: str, content: str) -> Path:
    """Write ``content`` to ``relative`` under ``cwd``, whole (atomic), creating folders.

    The path stays inside ``cwd``: absolute paths must lie under it, ``..`` is refused,
    every folder on the way must be a real folder (no symlink leads out) and an
    existing target must be a regular file.
    """
    if "\0" in relative:
        raise WriteRefused("the path holds a NUL character")
    path = Path(relative)
    if path.is_absolute():
        try:
            path = path.relative_to(cwd)
        except ValueError:
            raise WriteRefused("it is outside the run's folder") from None
    parts = path.parts
    if not parts or any(part == ".." for part in parts):
        raise WriteRefused("it is outside the run's folder")
    folder = cwd
    for part in parts[:-1]:
        folder = folder / part
        try:
            os.mkdir(folder, 0o755)
            continue
        except FileExistsError:
            pass
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise WriteRefused(f"{folder} is not a real folder")
    target = folder / parts[-1]
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(mode):
            raise WriteRefused("something other than a regular file is there")
    # Whole or not at all: a temporary file beside it, then renamed over it.
    temporary = folder / f".scripted-{uuid.uuid4().hex}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(content)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


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

    def _rule_for(self, prompt: str) -> tuple[ScriptRule, dict[str, str]]:
        """The first rule matching ``prompt`` and its match's named groups."""
        for rule in self.script.rules:
            if found := re.search(rule.match, prompt):
                groups = {k: v or "" for k, v in found.groupdict().items()}
                return rule, groups
        return ScriptRule(), {}

    async def run(self, request: RunRequest) -> AsyncIterator[RunEvent]:
        yield RunStarted(request.run_id)
        rule, groups = self._rule_for(request.prompt)
        values = {
            **groups,  # the built-in names win: {prompt} always means the prompt
            "prompt": request.prompt,
            "turn": str(request.turn),
            "agent": self.agent_id,
            "persona": self.persona,
        }
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
        for write in rule.write:
            path = fill(write.path, values)
            try:
                await asyncio.to_thread(write_in, request.cwd, path, fill(write.content, values))
            except (WriteRefused, OSError) as exc:
                yield RunFailed(f"scripted runner: cannot write {path!r}: {exc}")
                return
            yield MessageOut(
                Role.TOOL,
                f"{WRITE_TOOL}: {path}",
                tool={"name": WRITE_TOOL, "input": {"file_path": path}},
            )
        reply = fill(rule.reply, values)
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
