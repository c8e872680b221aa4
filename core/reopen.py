"""Back into the real session: open a Claude Code or Codex session in its own CLI.

:func:`reopen_plan` checks everything before anything runs and says what will
run: ``claude --resume ID`` or ``codex resume ID`` (the id alone: Claude Code
refuses ``--session-id`` beside ``--resume`` unless forking), in the session's
folder or another one the user chose, with the agent's configured binary and
environment. The id is data: it must be the UUID its agent minted, so the
CLI can never read it as an option. :func:`run_attached` runs the plan on the
caller's terminal and waits for the person to leave the agent;
:func:`run_attached_keeping_words` also keeps what a failing CLI said there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from core import ids
from core.config import AgentConfig, Settings
from core.errors import CwdMissing, InvalidRequest, NotReopenable
from core.models import Checkpoint, Session
from core.signal_handlers import handling

# runner -> (the source its sessions are imported as, the CLI's usual name)
_CLIS: dict[str, tuple[str, str]] = {
    "claude_code": (ids.CLAUDE_CODE, "claude"),
    "codex": (ids.CODEX, "codex"),
}
_RUNNER_OF_SOURCE = {source: runner for runner, (source, _) in _CLIS.items()}


@dataclass(frozen=True)
class ReopenPlan:
    """What opening a session runs: ``argv`` in ``cwd`` with ``env``."""

    conversation_id: str
    source: str  # the transcript's layout: "claude-code" or "codex"
    argv: tuple[str, ...]  # argv[0] is the resolved executable
    cwd: Path
    env: Mapping[str, str]
    shown_binary: str  # the binary as configured ("claude"), for the command line

    @property
    def command_line(self) -> str:
        """``cd DIR && claude --resume ID``, quoted for a POSIX shell (to paste elsewhere)."""
        words = shlex.join([self.shown_binary, *self.argv[1:]])
        return f"cd {shlex.quote(str(self.cwd))} && {words}"


def _runner_of(session: Session, settings: Settings) -> str | None:
    """The runner whose CLI owns the session, or None for delegate's own conversations."""
    if session.source in _RUNNER_OF_SOURCE:
        return _RUNNER_OF_SOURCE[session.source]
    config = settings.agents.get(session.agent_id)
    if config is not None and config.runner in _CLIS:
        return config.runner
    return None


def _agent_for(session: Session, settings: Settings, runner: str) -> tuple[str, AgentConfig]:
    """The configured agent to open it with: the session's own, else the first of its kind."""
    own = settings.agents.get(session.agent_id)
    if own is not None and own.runner == runner:
        return session.agent_id, own
    for name in sorted(settings.agents):
        if settings.agents[name].runner == runner:
            return name, settings.agents[name]
    return session.agent_id, AgentConfig(runner=runner)


def _inside_parent(session: Session) -> bool:
    """Whether the session lives in its parent's transcript: a Claude Code sub-agent
    imported with its parent (Claude's own Task agents). A sub-agent delegate launched
    has a transcript of its own under its own id, and opens like any session."""
    return session.source == ids.CLAUDE_CODE and session.parent_id is not None


def opens_interactively(session: Session, settings: Settings) -> bool:
    """Whether the session opens in an agent CLI (else: delegate's conversation view)."""
    runner = _runner_of(session, settings)
    if runner is None:
        return False
    return ids.is_uuid(session.conversation_id) and not _inside_parent(session)


def reopen_plan(
    session: Session, settings: Settings, *, cwd: str | None = None, find_binary: bool = True
) -> ReopenPlan:
    """How to open ``session`` in its CLI, in ``cwd`` (default: the session's folder).

    Raises :class:`NotReopenable` (delegate's own conversation, a sub-agent),
    :class:`InvalidId` (an id that is not its agent's), :class:`CwdMissing`
    and :class:`RunnerUnavailable` (no such CLI) before anything runs.
    ``find_binary=False`` leaves the binary as configured (a command line to
    copy into another terminal need not find it here).
    """
    runner = _runner_of(session, settings)
    if runner is None:
        raise NotReopenable(
            f"session {session.conversation_id!r} is delegate's own conversation "
            "(no agent CLI keeps it): open its conversation view instead"
        )
    source, default_binary = _CLIS[runner]
    cid = ids.validate_id(source, session.conversation_id)
    if not ids.is_uuid(cid) or _inside_parent(session):
        raise NotReopenable(
            f"session {cid!r} is a sub-agent: it runs inside its parent's session, "
            "so open the parent session instead"
        )
    folder = _existing_folder(cwd or session.cwd)
    agent_id, config = _agent_for(session, settings, runner)
    env = {**os.environ, **config.env}
    shown = config.binary or default_binary
    if find_binary:
        from core.runners.subprocess import resolve_binary  # the runners: only to reopen

        executable = resolve_binary(shown, env, f"agents.{agent_id}.binary")
    else:
        executable = shown
    args = ("--resume", cid) if runner == "claude_code" else ("resume", cid)
    return ReopenPlan(cid, source, (executable, *args), folder, env, shown)


def fork_plan(
    session: Session, checkpoint: Checkpoint, settings: Settings, *, find_binary: bool = True
) -> ReopenPlan:
    """How to fork a Claude Code or Codex session in its own CLI, from a checkpoint.

    ``claude --resume ID --fork-session`` and ``codex fork ID`` copy a whole
    session into a new one (delegate never writes their files), so the
    checkpoint must mark the session's newest message.
    """
    if checkpoint.seq < session.metrics.messages - 1:
        raise InvalidRequest(
            f"{session.agent_id} forks a whole session, not up to a message: mark a"
            " checkpoint at its newest message to fork it"
        )
    plan = reopen_plan(session, settings, find_binary=find_binary)
    fork = (
        ("fork", plan.conversation_id)
        if plan.source == "codex"
        else (
            "--resume",
            plan.conversation_id,
            "--fork-session",
        )
    )
    return ReopenPlan(
        plan.conversation_id,
        plan.source,
        (plan.argv[0], *fork),
        plan.cwd,
        plan.env,
        plan.shown_binary,
    )


def _existing_folder(cwd: str) -> Path:
    """``cwd`` (``~`` expanded) when it is a folder, else ``cwd_missing`` naming it."""
    try:
        path = Path(cwd).expanduser()
        if cwd and path.is_dir():
            return path
    except (OSError, RuntimeError, ValueError):  # ~nosuchuser, a NUL, a name too long
        pass
    raise CwdMissing(cwd)


# Told the agent's process once it runs, for a caller that may end it early.
Started = Callable[[asyncio.subprocess.Process], None]


async def run_attached(plan: ReopenPlan, *, started: Started | None = None) -> int:
    """Run the plan on this process's terminal (stdin, stdout, stderr inherited) and
    return its exit code once the person leaves the agent.

    Ctrl+C typed at the agent reaches it; this process only shrugs it off, so
    the caller (a suspended panel) comes back whatever the agent does with it.
    """
    with survive_interrupts():
        process = await asyncio.create_subprocess_exec(*plan.argv, cwd=plan.cwd, env=dict(plan.env))
        if started is not None:
            started(process)
        try:
            return await process.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            await process.wait()
            raise


@dataclass(frozen=True)
class Attached:
    """How an agent run on the terminal ended: its status and, when it failed, its own
    last words on the terminal (redacted, bounded; "" when it said nothing)."""

    code: int
    said: str = ""


async def run_attached_keeping_words(
    plan: ReopenPlan, *, started: Started | None = None
) -> Attached:
    """:func:`run_attached`, keeping what a failing CLI said: on a POSIX terminal the CLI
    runs on a terminal of its own mirrored to this one (:mod:`core.terminal_mirror`),
    so the lines it printed before failing ("No conversation found ...") can be shown
    once the caller has its screen back. Elsewhere it runs as :func:`run_attached` does.
    """
    if os.name != "posix":
        return Attached(await run_attached(plan, started=started))
    from core.terminal_mirror import last_words, run_mirrored  # POSIX only

    with survive_interrupts():
        ended = await run_mirrored(plan.argv, plan.cwd, plan.env, started=started)
    return Attached(ended.code, last_words(ended.tail) if ended.code != 0 else "")


def survive_interrupts() -> contextlib.AbstractContextManager[None]:
    """SIGINT ignored by this process (a handler, so the child still gets the default)."""

    def shrug(signum: int, frame: FrameType | None) -> None:
        pass

    return handling(signal.SIGINT, shrug)


def start_plan(
    session: Session, settings: Settings, prompt: str, *, cwd: str | None = None
) -> ReopenPlan:
    """How to start a *new* interactive session of ``session``'s agent CLI with
    ``prompt`` as its first message (``claude PROMPT``, ``codex PROMPT``), in
    ``cwd`` (default: the session's folder). ``conversation_id`` is the session
    it starts from: the new one gets its id from the CLI.

    Raises :class:`NotReopenable` for an agent with no interactive CLI (delegate's
    own, scripted or HTTP agents), :class:`CwdMissing` and :class:`RunnerUnavailable`.
    """
    runner = _runner_of(session, settings)
    if runner is None:
        raise NotReopenable(
            f"session {session.conversation_id!r} runs on an agent with no interactive CLI:"
            " continue it with `delegate handoff continue` instead"
        )
    if not prompt or prompt.startswith("-"):
        # The prompt is an argument: one an option parser could read is never passed.
        raise NotReopenable("a first prompt must not be empty or start with '-'")
    source, default_binary = _CLIS[runner]
    folder = _existing_folder(cwd or session.cwd)
    agent_id, config = _agent_for(session, settings, runner)
    env = {**os.environ, **config.env}
    shown = config.binary or default_binary
    from core.runners.subprocess import resolve_binary  # the runners: only to reopen

    executable = resolve_binary(shown, env, f"agents.{agent_id}.binary")
    return ReopenPlan(session.conversation_id, source, (executable, prompt), folder, env, shown)
