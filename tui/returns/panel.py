"""What the panel knows of compact returns: the artifacts sessions, a session's groups as
chains, the artifacts session a panel session ran in, a hand-off file to show.

Reads only: ``store.returns`` (the steps), the stored history (how chains ended) and
the hand-off files on disk. The screen is :class:`tui.returns.groups.ReturnGroupsScreen`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final

from core.documents.safe_files import read_regular_text
from core.errors import DelegateError
from core.events import ChainEnded
from core.models import Session
from core.orchestrator import AgentOrchestrator
from core.returns.model import END, INVALID_RETURN, AgentRole, ReturnSession, ReturnStep
from core.returns.registry import on_disk

SESSIONS_LOOKED_AT: Final = 50
"""Artifacts sessions searched for the steps a panel session ran (the newest first)."""
HISTORY_LOOKED_AT: Final = 500
"""Stored history events read for how chains ended, when the view opens."""
HANDOFF_MAX_BYTES: Final = 256 * 1024
"""A hand-off file larger than this is not shown (a role writes a few hundred bytes)."""
ARTIFACTS_PARTS: Final = (".delegate", "artifacts")

ChainKey = tuple[str, str]  # (artifacts session, group)


@dataclass(frozen=True)
class GroupChain:
    """One group's steps in order, and how delegate's chain run of it ended (if it did,
    after its last step)."""

    group_id: str
    steps: tuple[ReturnStep, ...]
    ended: ChainEnded | None = None

    @property
    def last(self) -> ReturnStep:
        return self.steps[-1]

    @property
    def next_role(self) -> str | None:
        """The role the group waits on; None once its chain stopped or ended."""
        last = self.last
        if self.ended is not None or last.status == INVALID_RETURN:
            return None
        if last.next_role is None or last.next_role == END:
            return None
        return last.next_role

    @property
    def done(self) -> bool:
        return self.last.next_role == END and self.last.status != INVALID_RETURN


async def return_sessions(orchestrator: AgentOrchestrator) -> list[ReturnSession]:
    """Every artifacts session with steps, the most recently active first."""
    return await orchestrator.return_sessions()


async def group_chains(
    orchestrator: AgentOrchestrator, session: str, ends: dict[ChainKey, ChainEnded]
) -> list[GroupChain]:
    """The session's groups by id, each with its steps by ``seq`` and its chain's end
    (one recorded before its last step belongs to an earlier run: left out); a step
    names its hand-off file only while it is there."""
    by_group: dict[str, list[ReturnStep]] = {}
    for step in await on_disk(await orchestrator.return_steps(session)):
        by_group.setdefault(step.group_id, []).append(step)
    chains = []
    for group, steps in sorted(by_group.items()):
        ended = ends.get((session, group))
        if ended is not None and _us(ended) < steps[-1].created_us:
            ended = None
        chains.append(GroupChain(group, tuple(steps), ended))
    return chains


def _us(event: ChainEnded) -> int:
    return int(event.at.timestamp() * 1_000_000)


async def chain_ends(orchestrator: AgentOrchestrator) -> dict[ChainKey, ChainEnded]:
    """The newest ``ChainEnded`` of each group among the latest stored history events."""
    ends: dict[ChainKey, ChainEnded] = {}
    for event in await orchestrator.history(HISTORY_LOOKED_AT):  # newest first
        if isinstance(event, ChainEnded):
            ends.setdefault((event.artifacts_session, event.group_id), event)
    return ends


async def artifacts_session_of(orchestrator: AgentOrchestrator, session: Session) -> str | None:
    """The newest artifacts session with a step run in ``session`` or in one of its
    sub-agents (a primary's role launches); None when it ran none."""
    ids = {session.conversation_id}
    try:
        children = await orchestrator.list_children(session.conversation_id)
    except DelegateError:
        children = None
    if children is not None:
        ids.update(child.conversation_id for child in children.sessions)
    for candidate in (await orchestrator.return_sessions())[:SESSIONS_LOOKED_AT]:
        steps = await orchestrator.return_steps(candidate.artifacts_session)
        if any(step.conversation_id in ids for step in steps):
            return candidate.artifacts_session
    return None


def shown_path(path: str) -> str:
    """A hand-off file's place inside its artifacts session (``AUTH/handoffs/…json``);
    the whole path when it is not under one."""
    parts = PurePath(path).parts
    for index in range(len(parts) - 2):
        if parts[index : index + 2] == ARTIFACTS_PARTS and index + 3 < len(parts):
            return "/".join(parts[index + 3 :])
    return path


@dataclass(frozen=True)
class HandoffView:
    """A hand-off file as the viewer shows it: its JSON pretty-printed, or the problem."""

    path: str
    text: str | None = None
    problem: str | None = None  # nothing to show: why
    invalid: str | None = None  # shown, but not the role's schema: where it is not


def read_handoff_view(
    path: str, role: AgentRole | None = None, *, max_bytes: int = HANDOFF_MAX_BYTES
) -> HandoffView:
    """Read ``path`` for the viewer (blocking: run it in a thread).

    Only a regular file (no symlink as the file, none leading out of its artifacts
    session's folder), at most ``max_bytes``, holding one JSON object; with ``role``,
    checked against that role's schema too (an invalid one is still shown).
    """
    file = Path(path)
    if not file.is_absolute() or "\x00" in path:
        return HandoffView(path, problem="not an absolute path: not opened")
    try:
        if (escape := _leaves_its_folder(file)) is not None:
            return HandoffView(path, problem=escape)
        raw = read_regular_text(file, what="hand-off", max_bytes=max_bytes)
    except DelegateError as exc:
        return HandoffView(path, problem=exc.message)
    except (OSError, ValueError) as exc:  # a path the file system cannot name
        return HandoffView(path, problem=f"cannot be read: {exc}")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return HandoffView(path, problem=f"{path} is not JSON: {exc}")
    if not isinstance(data, dict):
        return HandoffView(path, problem=f"{path} holds JSON, but not an object")
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if role is not None:
        from core.returns.schemas import validate_handoff  # its models: built on first use

        try:
            validate_handoff(role, data, where=file.name)
        except DelegateError as exc:
            return HandoffView(path, text=text, invalid=exc.message)
    return HandoffView(path, text=text)


def _leaves_its_folder(file: Path) -> str | None:
    """Why ``file`` is not opened: not inside an artifacts session's folder, or a link
    leading out of it."""
    parts = file.parts
    root = None
    for index in range(len(parts) - 2):
        if parts[index : index + 2] == ARTIFACTS_PARTS and index + 2 < len(parts) - 1:
            root = Path(*parts[: index + 3])
            break
    if root is None or ".." in parts:
        return f"{file} is not inside an artifacts session's folder: not opened"
    real_root = os.path.realpath(root)
    real_folder = os.path.realpath(file.parent)
    if os.path.commonpath([real_root, real_folder]) != real_root:
        return f"{file} leads out of {root} (a link): not opened"
    return None
