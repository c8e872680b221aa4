"""delegate's hook commands: what it installs into an agent CLI, and how it knows its own.

The program an agent runs for an event (this interpreter, ``-P``, this data
folder), Claude Code's hook groups and Codex's ``notify`` argv, and the test that
tells delegate's entries from a person's: the marker only delegate writes, or the
exact command line an older delegate wrote.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path, PurePath
from typing import Any

from core import ids

CLAUDE_EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop")
"""The Claude Code hook events delegate handles (see docs/hooks.md)."""
CODEX_EVENTS: tuple[str, ...] = ("notify",)
"""Codex's one turn-complete program."""
AGENT_EVENTS: dict[str, tuple[str, ...]] = {ids.CLAUDE_CODE: CLAUDE_EVENTS, ids.CODEX: CODEX_EVENTS}
HOOK_TIMEOUT_S = 60
"""How long Claude Code lets one of delegate's hooks run (an import and a few writes)."""
MARKER = "DELEGATE_HOOK=1"
"""What only delegate writes into its hook commands (an environment variable, so the
command runs the same): how ``uninstall`` knows an entry is delegate's."""

_PYTHON = re.compile(r"python[0-9.]*")


def hook_command(data_dir: Path, agent: str, event: str) -> list[str]:
    """The program an agent runs for ``event``: this delegate, on this data folder.

    The interpreter running now, with ``-P`` so a project's own ``tui`` folder
    (the hook runs in the project) can never stand in for delegate's.
    """
    return [
        sys.executable,
        "-P",
        "-m",
        "tui.cli",
        "--data-dir",
        str(data_dir),
        "hook",
        agent,
        event,
    ]


def claude_command(data_dir: Path, event: str) -> str:
    """The shell line of delegate's Claude Code hook for ``event``, marker first."""
    return f"{MARKER} {shlex.join(hook_command(data_dir, ids.CLAUDE_CODE, event))}"


def codex_notify(data_dir: Path) -> list[str]:
    """Codex's ``notify`` argv (run without a shell: ``env`` sets the marker)."""
    return ["env", MARKER, *hook_command(data_dir, ids.CODEX, "notify")]


def claude_hooks(data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """delegate's Claude Code hooks for ``data_dir``: one group per event, in the
    shape of ``settings.json``'s ``hooks`` (also given to a CLI delegate opens, as
    ``--settings``)."""
    return {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": claude_command(data_dir, event),
                        "timeout": HOOK_TIMEOUT_S,
                    }
                ]
            }
        ]
        for event in CLAUDE_EVENTS
    }


def is_delegate_command(command: object, agent: str) -> bool:
    """Whether a hook command (a shell line or an argv) is one delegate installed:
    marked as delegate's, or exactly the line an older delegate wrote."""
    return hook_argv(command, agent) is not None


def hook_argv(command: object, agent: str) -> list[str] | None:
    """The delegate command line in ``command`` (without the marker), if it is delegate's."""
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if words[:1] == [MARKER]:
            exact = command == f"{MARKER} {shlex.join(words[1:])}"
            words = words[1:]
        else:  # as an older delegate wrote it
            exact = command == shlex.join(words)
        return words if exact and _is_hook_argv(words, agent) else None
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        words = command[2:] if command[:2] == ["env", MARKER] else command
        return list(words) if _is_hook_argv(words, agent) else None
    return None


def _is_hook_argv(words: list[str], agent: str) -> bool:
    return (
        len(words) == 9
        and _PYTHON.fullmatch(PurePath(words[0]).name) is not None
        and words[1:5] == ["-P", "-m", "tui.cli", "--data-dir"]
        and bool(words[5])
        and words[6:8] == ["hook", agent]
        and words[8] in AGENT_EVENTS[agent]
    )
