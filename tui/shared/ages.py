"""A moment's age as the panel shows it (``"3m ago"``).

Standard library only: the first page drawn before the app's imports
(``tui.first_page``) writes its rows' ages with it, as the app does.
"""

from __future__ import annotations

from datetime import datetime

AGE_WIDTH = 8  # the panel's age column: every age is right-aligned to it, "just now" fills it


def ago(moment: datetime, now: datetime) -> str:
    """``"3m ago"``-style age relative to ``now`` (an injectable clock reading)."""
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 45:
        return "just now"
    for size, unit in ((86_400 * 365, "y"), (86_400 * 7, "w"), (86_400, "d"), (3600, "h")):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{max(1, seconds // 60)}m ago"
