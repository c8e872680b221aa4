"""The history pane: a timeline of cells, one per history event (newest at the bottom)."""

from tui.widgets.history.timeline import *  # noqa: F403
