"""Context thresholds: which settings apply to a session, and which levels it has reached.

The ``[context]`` table of the data folder's ``config.toml`` applies everywhere;
a project can override any of its keys in ``<repo>/.delegate/config.toml`` (its
own ``[context]`` table, ``windows`` merged entry by entry). A level is reached
at or above its per cent of the session's window: ``notify_user_at`` (a
warning), ``reminder``, ``handoff`` (a hand-off document, work continues in a
new session) and ``force`` (no further prompt is sent). See docs/context.md.
"""

from __future__ import annotations

import asyncio
import os
import stat
import tomllib
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from core.config import CONFIG_FILENAME, ContextSettings, Settings
from core.errors import ContextExhausted, InvalidConfig
from core.gitinfo import worktree_root
from core.models import ContextLevel, Session
from core.store import Store

PROJECT_FOLDER = ".delegate"
"""A project's own delegate folder, at the top of its worktree."""
MAX_PROJECT_CONFIG_BYTES = 256 * 1024
"""A project settings file larger than this is refused (it is a few lines)."""

RISING_LEVELS = (
    ContextLevel.NOTIFY,
    ContextLevel.REMINDER,
    ContextLevel.HANDOFF,
    ContextLevel.FORCE,
)
"""Every level a session can reach, lowest first (``OK`` is reaching none)."""


class HandOff(Protocol):
    """What acts at the hand-off level: writes the document and continues the work.

    ``core.continuation.Continuation`` is the implementation; anything with this
    method will do (the monitor only needs to ask for a hand-off).
    """

    async def hand_off(self, conversation_id: str) -> object:
        """Hand the session off; expected failures are reported, never raised."""
        ...


def project_config_path(cwd: str | os.PathLike[str]) -> Path:
    """Where the project holding ``cwd`` keeps its settings: ``<repo>/.delegate/config.toml``
    (``<cwd>/.delegate/config.toml`` outside a repository)."""
    folder = Path(cwd)
    root = worktree_root(folder) or folder
    return root / PROJECT_FOLDER / CONFIG_FILENAME


def effective_context(settings: Settings, cwd: str | os.PathLike[str]) -> ContextSettings:
    """The ``[context]`` settings for a session working in ``cwd``: the project's
    keys over the data folder's. A broken project file is an ``invalid_config``
    naming the file and the key."""
    path = project_config_path(cwd)
    table = _project_context_table(path)
    if table is None:
        return settings.context
    base = settings.context.model_dump()
    windows = table.get("windows", {})
    if isinstance(windows, dict):  # otherwise validation says what is wrong with it
        table = {**table, "windows": {**settings.context.windows, **windows}}
    try:
        return ContextSettings.model_validate({**base, **table})
    except ValidationError as exc:
        raise InvalidConfig(f"project settings file {path} is invalid: {_problems(exc)}") from None


def _problems(exc: ValidationError) -> str:
    """``context.KEY: what is wrong`` for each error, on one line (never the values)."""
    problems = []
    for err in exc.errors():
        where = ".".join(["context", *(str(p) for p in err["loc"])])
        what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{where}: {what.removeprefix('Value error, ')}")
    return "; ".join(problems)


def _project_context_table(path: Path) -> dict[str, object] | None:
    """The ``[context]`` table of a project settings file; None when there is no file."""
    text = _read_regular_file(path)
    if text is None:
        return None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidConfig(f"project settings file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"context"})
    if unknown:
        # A typo (``[contxt]``) would otherwise silently leave the defaults in place.
        raise InvalidConfig(
            f"project settings file {path} is invalid: {', '.join(unknown)}: unknown key"
            " (a project file holds only a [context] table)"
        )
    table = raw.get("context", {})
    if not isinstance(table, dict):
        raise InvalidConfig(f"project settings file {path} is invalid: context: must be a table")
    return table


def _read_regular_file(path: Path) -> str | None:
    """The text of ``path`` if it is a regular file; None if it does not exist.

    Opened without blocking and checked after opening: a FIFO or a device put
    there would otherwise hang or never end.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # `.delegate` is a file: there are no project settings
        return None
    except OSError as exc:
        raise InvalidConfig(
            f"project settings file {path} cannot be read: {exc.strerror}"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidConfig(f"project settings file {path} is not a regular file")
        if info.st_size > MAX_PROJECT_CONFIG_BYTES:
            raise InvalidConfig(
                f"project settings file {path} is larger than"
                f" {MAX_PROJECT_CONFIG_BYTES // 1024} KiB"
            )
        data = os.read(fd, MAX_PROJECT_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InvalidConfig(
            f"project settings file {path} cannot be read: {exc.strerror}"
        ) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidConfig(f"project settings file {path} is not UTF-8 text") from None


def threshold_of(level: ContextLevel, ctx: ContextSettings) -> int:
    """The per cent at which ``level`` is reached (0 for ``OK``)."""
    return {
        ContextLevel.OK: 0,
        ContextLevel.NOTIFY: ctx.notify_user_at,
        ContextLevel.REMINDER: ctx.reminder,
        ContextLevel.HANDOFF: ctx.handoff,
        ContextLevel.FORCE: ctx.force,
    }[level]


def levels_crossed(percent: float, ctx: ContextSettings) -> list[ContextLevel]:
    """Every level reached at ``percent`` of the window, lowest first."""
    return [level for level in RISING_LEVELS if percent >= threshold_of(level, ctx)]


def level_of(percent: float, ctx: ContextSettings) -> ContextLevel:
    """The highest level reached at ``percent`` of the window (``OK`` below the first)."""
    crossed = levels_crossed(percent, ctx)
    return crossed[-1] if crossed else ContextLevel.OK


async def exhausted(store: Store, settings: Settings, session: Session) -> ContextExhausted | None:
    """The refusal a prompt to ``session`` gets once its context passed the force level
    (naming the newest session its work continues in), or None while it may be prompted."""
    ctx = await asyncio.to_thread(effective_context, settings, session.cwd)
    usage = session.context
    if not ctx.enabled or usage.limit_tokens <= 0 or usage.percent < ctx.force:
        return None
    return ContextExhausted(
        session.conversation_id, await newest_successor(store, session), usage.percent
    )


async def newest_successor(store: Store, session: Session) -> str | None:
    """The last session of the hand-off chain after ``session`` (None: not continued)."""
    if session.continued_in is None:
        return None
    newest = await store.sessions.newest_in_chain(session.conversation_id)
    return None if newest == session.conversation_id else newest
