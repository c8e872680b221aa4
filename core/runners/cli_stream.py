"""An agent CLI's run over JSON Lines: the skeleton both CLI runners share.

It owns a CLI run's order of events and when reading stops: stderr lines pass
through as they arrive, each stdout line goes through the runner's parser, reading
ends as soon as the parser has the CLI's last word (a background child may hold
stdout open), and the process's exit is kept for the closing event. What a line
means stays with each runner's parser (``claude_code``, ``codex``).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.runners.base import RunEvent, StderrLine, json_object
from core.runners.subprocess import cli_process


class CliStreamParser(ABC):
    """Turns one CLI's stdout lines into run events.

    A blank line says nothing; a line that is not a JSON object is counted in
    ``skipped`` (the formats are not documented contracts and grow); every object
    goes to :meth:`on_object`.
    """

    skipped: int

    @property
    @abstractmethod
    def done(self) -> bool:
        """The CLI has said its last word (its result): reading stops."""

    @abstractmethod
    def on_object(self, data: dict[str, Any]) -> list[RunEvent]:
        """The events one decoded line gives."""

    def announcements(self) -> list[RunEvent]:
        """Events the state a line left calls for, beyond the line's own (none here)."""
        return []

    def feed(self, line: str) -> list[RunEvent]:
        if not line.strip():
            return []
        data = json_object(line)
        if data is None:
            self.skipped += 1
            return []
        return self.on_object(data)


@dataclass(slots=True)
class CliExit:
    """How the CLI ended, known once :func:`stream_cli` has finished."""

    returncode: int = -1
    stderr: str = ""


async def stream_cli(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    parser: CliStreamParser,
    exited: CliExit,
) -> AsyncGenerator[RunEvent, None]:
    """Run ``argv`` and yield what it says, in order; ``exited`` holds its exit after.

    The process group never outlives the stream: close it (``contextlib.aclosing``)
    and the CLI is stopped on the way out.
    """
    async with (
        cli_process(argv, cwd=cwd, env=env) as proc,
        contextlib.aclosing(proc.lines()) as lines,
    ):
        async for line in lines:
            if isinstance(line, StderrLine):
                yield line  # what the agent says while it works (retries, errors)
                continue
            for event in parser.feed(line):
                yield event
            for event in parser.announcements():
                yield event
            if parser.done:
                break  # a background child may hold stdout open: no wait for EOF
    exited.returncode, exited.stderr = proc.returncode, proc.stderr_tail
