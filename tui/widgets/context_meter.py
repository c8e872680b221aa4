"""The compact context meter: ``▰▰▰▱▱ 42k used · 79% left``, coloured by the
``[context]`` thresholds in force for the session (:mod:`tui.shared.context_levels`).

Unknown usage draws an empty, dim bar and says so; an estimate (after a
compaction) is marked ``≈`` and its bar dimmed.
"""

from __future__ import annotations

from rich.text import Text

from core.config import ContextSettings
from core.models import ContextUsage
from tui.shared import formatting as fmt
from tui.shared.context_levels import DEFAULT_THRESHOLDS, LEVEL_STYLES, level_at, level_style


def meter_text(
    context: ContextUsage, *, thresholds: ContextSettings = DEFAULT_THRESHOLDS, bar_width: int = 5
) -> Text:
    """The meter as Rich text, for list rows and the status panel."""
    text = Text()
    if not context.known:
        if bar_width > 0:
            text.append("▱" * bar_width + " ", "dim")
        text.append(fmt.meter(context), "dim italic")
        return text
    if context.limit_tokens > 0 and bar_width > 0:
        used = 1.0 - context.left_fraction
        filled = min(bar_width, round(used * bar_width))
        if used > 0 and filled == 0:
            filled = 1
        # An estimate's bar is dimmed, so it never reads as a measured figure.
        style = LEVEL_STYLES[level_at(context, thresholds)] + (" dim" if context.estimated else "")
        text.append("▰" * filled, style)
        text.append("▱" * (bar_width - filled), "dim")
        text.append(" ")
    text.append(fmt.meter(context), level_style(context, thresholds))
    return text
