"""Keeps the list's first page for the next start to draw before its imports (not drawn).

Whenever the list as a start shows it (its first page, the starting scope, no search)
may have changed, and once it has been quiet for ``quiet_s``, the keeper reads the
first page again between two readings of the store's change counter and keeps its
text (``tui.first_page``). A change between the two readings keeps nothing: the row
that made it brings another keep. Keeping is a cache's write: a failure is logged,
never shown, and the next start simply draws nothing before its first frame.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from textual import work
from textual.timer import Timer
from textual.widget import Widget

from core.errors import DelegateError
from core.models import SearchPage
from tui.first_page import FirstPage
from tui.widgets.session_list import SessionList

log = logging.getLogger(__name__)

QUIET_S = 0.5

ChangeCounter = Callable[[], Awaitable[int]]
FirstPageReader = Callable[[int], Awaitable[SearchPage]]


class FirstPageKeeper(Widget):
    """Keeps the first page of ``rows`` in ``page`` while ``as_started()`` holds;
    ``rise()``: how many lines higher the list sits in a start's first frame."""

    DEFAULT_CSS = "FirstPageKeeper { display: none; }"

    def __init__(
        self,
        page: FirstPage,
        rows: SessionList,
        *,
        change_counter: ChangeCounter,
        read_first_page: FirstPageReader,
        as_started: Callable[[], bool],
        rise: Callable[[], int] = lambda: 0,
        quiet_s: float = QUIET_S,
    ) -> None:
        super().__init__()
        self._page = page
        self._rows = rows
        self._change_counter = change_counter
        self._read_first_page = read_first_page
        self._as_started = as_started
        # How many lines higher the list sits in a start's first frame than now.
        self._rise = rise
        self._quiet_s = quiet_s
        self._timer: Timer | None = None

    def keep_soon(self) -> None:
        """Keep the first page once the list has been quiet for ``quiet_s``."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self._quiet_s, self._keep)

    @work(group="first-page", exclusive=True, exit_on_error=False)
    async def _keep(self) -> None:
        self._timer = None
        if not self._as_started():
            return
        try:
            before = await self._change_counter()
            page = await self._read_first_page(self._rows.page_size)
            if await self._change_counter() != before or not self._as_started():
                return  # what changed meanwhile brings its own keep
            sessions = [result.session for result in page.results]
            rows = self._rows.kept_rows(sessions, before, rise=self._rise()) if sessions else None
            if rows is None:
                await asyncio.to_thread(self._page.forget)
            else:
                await asyncio.to_thread(self._page.save, rows)
        except (DelegateError, OSError) as exc:  # a cache: the next start just draws later
            log.warning("the first page was not kept: %s", exc)
