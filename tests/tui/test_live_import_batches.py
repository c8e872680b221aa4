"""Sessions streaming in while the panel is open (an import's batches, written by another
process): the list takes them in the store's order, in few updates, with the highlight
and the footer left alone, and paging still reaches every session.

Real parts: the store written between the panel's reads, the real supervisor with its
intervals shrunk, the real app.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Footer
from tui_support import (
    FIXED_NOW,
    AppFactory,
    insert_sessions,
    session_list,
    session_with,
    started,
    wait_until,
)

from core.models import Session, SessionMode, SessionState
from tui.app import DelegateApp
from tui.live import Supervision, Throttle
from tui.widgets.live_rows import LiveRows

QUICK = Supervision(store_poll_s=0.05, tick_s=0.2, debounce_ms=50, rescan_s=0.5)


def ids(app: DelegateApp) -> list[str]:
    return [s.conversation_id for s in session_list(app).sessions]


async def store_order(app: DelegateApp) -> list[str]:
    """Every top-level session, as the store pages them."""
    assert app.orchestrator is not None
    page = await app.orchestrator.list_sessions(100, None)
    assert page.next_cursor is None
    return [s.conversation_id for s in page.sessions]


async def page_to_the_end(pilot: Pilot[None], app: DelegateApp) -> None:
    listed = session_list(app)
    while listed.has_more:
        before = len(listed.sessions)
        await pilot.press("end")
        await wait_until(pilot, lambda n=before: len(listed.sessions) > n, what="the next page")


def footer_keys(app: App[None]) -> list[Widget]:
    """The footer's key widgets (rebuilt whenever the footer works its keys out again)."""
    return list(app.screen.query_one(Footer).children)


async def test_many_batches_arriving_quickly_are_all_listed_in_order_and_the_highlight_stays(
    data_dir: Path, make_app: AppFactory
) -> None:
    # Thirty sessions: a first page of 25 and more behind the cursor.
    old = [
        session_with(f"old-{n:02d}", ["a prompt", "a reply"], title=f"old {n}", minutes_ago=100 + n)
        for n in range(30)
    ]
    await insert_sessions(data_dir, old)
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        assert len(listed.sessions) == 25
        assert listed.has_more
        await pilot.press("down", "down")
        await pilot.pause()
        kept = listed.highlighted_session
        assert kept is not None
        assert kept.title == "old 2"
        keys_before = footer_keys(app)
        assert "Archive" in [getattr(k, "description", "") for k in keys_before]

        # Twelve writes in quick succession, as an import commits its batches: newer
        # sessions than any listed, ones between listed rows (the same minute as a
        # listed one, ordered by id as the store orders them) and older ones.
        for batch in range(12):
            await insert_sessions(
                data_dir,
                [
                    session_with(
                        f"new-{batch:02d}-{n}",
                        ["a prompt", "a reply"],
                        title=f"new {batch} {n}",
                        minutes_ago=(1 + batch, 100 + batch, 140 + batch)[n % 3],
                    )
                    for n in range(5)
                ],
            )
        newer = {f"new-{b:02d}-{n}" for b in range(12) for n in range(5) if n % 3 != 2}
        await wait_until(
            pilot,
            lambda: newer <= listed.known_ids(),
            seconds=15,
            what="every new session that sorts among the rows read",
        )
        await pilot.pause()

        expected = await store_order(app)
        assert len(expected) == 90
        # The rows on show are the store's first rows, in its order.
        assert ids(app) == expected[: len(ids(app))]
        # The highlight stayed on its session; nothing re-announced it (the footer
        # was not rebuilt: the same keys, still archiving a session of the pool).
        now = listed.highlighted_session
        assert now is not None
        assert now.conversation_id == kept.conversation_id
        assert footer_keys(app) == keys_before

        # Every session is reachable by paging, once, in the store's order.
        await page_to_the_end(pilot, app)
        assert ids(app) == expected


async def test_a_session_arriving_between_listed_rows_takes_its_place(
    data_dir: Path, make_app: AppFactory
) -> None:
    await insert_sessions(
        data_dir,
        [
            session_with(f"s-{m}", ["a prompt", "a reply"], title=f"{m}m", minutes_ago=m)
            for m in (10, 20, 30)
        ],
    )
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        await insert_sessions(
            data_dir,
            [session_with("s-25", ["a prompt", "a reply"], title="25m", minutes_ago=25)],
        )
        await wait_until(pilot, lambda: len(listed.sessions) == 4, what="the new row")
        assert [s.title for s in listed.sessions] == ["10m", "20m", "25m", "30m"]
        highlighted = listed.highlighted_session
        assert highlighted is not None
        assert highlighted.title == "10m"


async def test_calls_in_a_burst_run_at_once_and_then_once_more_at_the_interval() -> None:
    app: App[None] = App()
    async with app.run_test() as pilot:
        runs: list[float] = []
        throttle = Throttle(app, 0.2, lambda: runs.append(time.monotonic()))
        for _ in range(10):
            throttle()
        assert len(runs) == 1  # the first at once
        assert throttle.due
        await wait_until(pilot, lambda: len(runs) == 2, what="the second run")
        assert runs[1] - runs[0] >= 0.2
        await asyncio.sleep(0.3)
        assert len(runs) == 2  # ten calls, two runs
        throttle.now()
        assert len(runs) == 3
        assert not throttle.due


def _idle(conversation_id: str) -> Session:
    """A session as the store would give it back: only its id matters here."""
    return Session(
        conversation_id=conversation_id,
        agent_id="echo",
        mode=SessionMode.STANDARD,
        state=SessionState.IDLE,
        cwd="/tmp",
        created_at=FIXED_NOW,
        last_interacted_at=FIXED_NOW,
    )


async def test_a_session_reported_many_times_in_a_burst_is_read_once_per_interval() -> None:
    """An import's commits report the same sessions again and again (added, then their
    counts and links): each interval reads each of them once."""
    reads: list[str] = []
    read: list[LiveRows.Read] = []

    async def read_sessions(conversation_ids: Sequence[str]) -> dict[str, Session]:
        reads.extend(conversation_ids)
        return {cid: _idle(cid) for cid in conversation_ids}

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LiveRows(read_sessions, every_s=1.0)

        def on_live_rows_read(self, message: LiveRows.Read) -> None:
            read.append(message)

    async def until(condition: Callable[[], bool]) -> None:
        # Not wait_until: it lets workers finish, and the reading worker's wait is the point.
        for _ in range(500):
            if condition():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("timed out")

    app = Host()
    async with app.run_test():
        rows = app.query_one(LiveRows)
        rows.queue(("a", "b"), ())
        await until(lambda: len(read) == 1)  # the first batch at once
        for _ in range(3):  # reported again and again within the interval
            rows.queue(("a",), ())
            rows.queue(("b", "c"), ())
            await asyncio.sleep(0.02)  # each would be a read of its own, unpaced
        await until(lambda: len(read) == 2)
        await app.workers.wait_for_complete()
        assert [[s.conversation_id for s in r.sessions] for r in read] == [
            ["a", "b"],
            ["a", "b", "c"],
        ]
        assert sorted(reads) == ["a", "a", "b", "b", "c"]


async def test_a_session_gone_before_its_batch_is_read_is_reported_removed() -> None:
    read: list[LiveRows.Read] = []

    async def read_sessions(conversation_ids: Sequence[str]) -> dict[str, Session]:
        return {cid: _idle(cid) for cid in conversation_ids if cid != "deleted-meanwhile"}

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LiveRows(read_sessions)

        def on_live_rows_read(self, message: LiveRows.Read) -> None:
            read.append(message)

    app = Host()
    async with app.run_test() as pilot:
        app.query_one(LiveRows).queue(("kept", "deleted-meanwhile"), ("removed",))
        await wait_until(pilot, lambda: bool(read), what="the batch")
    assert [s.conversation_id for s in read[0].sessions] == ["kept"]
    assert read[0].removed == ("removed", "deleted-meanwhile")
