"""The context level a meter shows, by the thresholds in force for the session's project.

Every meter of the panel (list rows, the preview header, the status line's
fullest sessions, the transcript view) colours by the same ``[context]``
thresholds that act on the session: notify, reminder, hand-off, force.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.config import ContextSettings, Settings
from core.context.thresholds import effective_context
from core.errors import InvalidConfig
from core.models import ContextLevel, ContextUsage

log = logging.getLogger(__name__)

# Exact colours, not the terminal theme's "yellow" (close to orange in many themes):
# each level must read apart from the next.
LEVEL_STYLES: dict[ContextLevel, str] = {
    ContextLevel.OK: "green",
    ContextLevel.NOTIFY: "gold1",
    ContextLevel.REMINDER: "bold gold1",
    ContextLevel.HANDOFF: "dark_orange",
    ContextLevel.FORCE: "bold red",
}

# The built-in thresholds, for a meter drawn without settings at hand.
DEFAULT_THRESHOLDS = ContextSettings()

# A session's working folder -> the thresholds in force there.
ThresholdsFor = Callable[[str], ContextSettings]


def level_at(context: ContextUsage, thresholds: ContextSettings) -> ContextLevel:
    """The highest level ``context`` has reached (OK when usage or the window is unknown)."""
    if not context.known or context.limit_tokens <= 0:
        return ContextLevel.OK
    percent = context.percent
    for level, at in (
        (ContextLevel.FORCE, thresholds.force),
        (ContextLevel.HANDOFF, thresholds.handoff),
        (ContextLevel.REMINDER, thresholds.reminder),
        (ContextLevel.NOTIFY, thresholds.notify_user_at),
    ):
        if percent >= at:
            return level
    return ContextLevel.OK


def level_style(context: ContextUsage, thresholds: ContextSettings) -> str:
    """The colour of ``context``'s meter; "" below the first threshold (quiet)."""
    level = level_at(context, thresholds)
    return "" if level is ContextLevel.OK else LEVEL_STYLES[level]


class Thresholds:
    """The thresholds in force per working folder (the project's ``.delegate/config.toml``
    over the data folder's), read once per folder while the panel is open."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._by_cwd: dict[str, ContextSettings] = {}

    def __call__(self, cwd: str) -> ContextSettings:
        found = self._by_cwd.get(cwd)
        if found is None:
            found = self._by_cwd[cwd] = self._read(cwd)
        return found

    def _read(self, cwd: str) -> ContextSettings:
        try:
            return effective_context(self._settings, cwd)
        except InvalidConfig as exc:
            # A meter is no place for a settings error: the thresholds that act on the
            # session say it where it matters; the meter keeps the data folder's levels.
            log.warning("%s", exc.message)
            return self._settings.context
        except (OSError, ValueError):  # a folder name the system refuses
            return self._settings.context
