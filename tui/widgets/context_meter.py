"""The compact context meter: ``▰▰▰▱▱ 42k used · 79% left``, coloured by threshold.

Unknown usage draws an empty, dim bar and says so; an estimate (after a
compaction) is marked ``≈`` and its bar dimmed.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from core.models import ContextUsage
from core.tokens import meter_level
from tui import formatting as fmt

LEVEL_STYLES = {
    "ok": "green",
    "warn": "yellow",
    "handoff": "dark_orange",
    "force": "bold red",
}


def meter_text(context: ContextUsage, *, bar_width: int = 5) -> Text:
    """The meter as Rich text, for list rows and the status panel."""
    text = Text()
    if not context.known:
        if bar_width > 0:
            text.append("▱" * bar_width + " ", "dim")
        text.append(fmt.meter(context), "dim italic")
        return text
    level = meter_level(context.used_tokens, context.limit_tokens)
    if context.limit_tokens > 0 and bar_width > 0:
        used = 1.0 - context.left_fraction
        filled = min(bar_width, round(used * bar_width))
        if used > 0 and filled == 0:
            filled = 1
        # An estimate's bar is dimmed, so it never reads as a measured figure.
        style = LEVEL_STYLES[level] + (" dim" if context.estimated else "")
        text.append("▰" * filled, style)
        text.append("▱" * (bar_width - filled), "dim")
        text.append(" ")
    text.append(fmt.meter(context), LEVEL_STYLES[level] if level != "ok" else "")
    return text


class ContextMeter(Static):
    """A standalone meter widget bound to one session's context usage."""

    DEFAULT_CSS = """
    ContextMeter { width: auto; height: 1; }
    """

    usage: reactive[ContextUsage] = reactive(ContextUsage, layout=True)

    def render(self) -> Text:
        return meter_text(self.usage, bar_width=10)
