"""A warm start draws its first page before the app, and the app lands on it (in tmux).

The real ``delegate`` entry point (``tui.start``) in a tmux pane of a server of its own:
a first start keeps the page and quits; the second start's screen is polled from the
moment it begins. Its first rows must come before anything only the app draws (the
line over the list), in the cells where the app then draws the same rows. Skipped
where tmux is not installed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import insert_sessions, session_with

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REPO = Path(__file__).resolve().parents[2]
TITLES = [f"Session number {n} of the warm start" for n in range(12)]
APP_ONLY = "by last activity"  # the line over the list: drawn by the app, never before it
START = "import sys; from tui.start import main; sys.exit(main())"


class Pane:
    """One tmux server (its own socket) and the pane the panel runs in."""

    def __init__(self, socket: str, env: dict[str, str], cwd: Path) -> None:
        self.socket, self.env, self.cwd = socket, env, cwd

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            env=self.env,
        )
        return done.stdout

    def start(self, argv: list[str], size: tuple[int, int]) -> None:
        """Start ``argv`` in the pane once the last start there has ended."""
        deadline = time.monotonic() + 10
        while "panel" in self.tmux("list-sessions", "-F", "#S").split():
            if time.monotonic() > deadline:
                self.tmux("kill-session", "-t", "panel")
            time.sleep(0.05)
        window = ["-s", "panel", "-x", str(size[0]), "-y", str(size[1]), "-c", str(self.cwd)]
        self.tmux("new-session", "-d", *window, *argv)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "panel")

    def screens_until(self, text: str, seconds: float = 30) -> list[str]:
        """Every different screen shown until one holds ``text``."""
        seen: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.text()
            if not seen or screen != seen[-1]:
                seen.append(screen)
            if text in screen:
                return seen
            time.sleep(0.005)
        raise AssertionError(f"timed out waiting for {text!r}; the pane shows:\n{self.text()}")


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "DELEGATE_HOME")}
    env |= {"HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    (tmp_path / "home").mkdir()
    server = Pane(f"delegate-first-page-{os.getpid()}-{tmp_path.name}", env, tmp_path)
    # A session of its own keeps the server up between starts: a server whose last
    # session has just ended is shutting down, and a start sent to it may be lost.
    server.tmux("new-session", "-d", "-s", "keep", "sleep 600")
    yield server
    server.tmux("kill-server")


def a_start_that_kept_its_page(pane: Pane, data_dir: Path, size: tuple[int, int]) -> list[str]:
    """A store of ``TITLES``, and a first start of the panel on it (nothing kept yet, so
    the app draws first) that stays until it has kept its page; the start's argv."""
    sessions = [
        session_with(
            f"5e55{n:04d}-0000-4000-8000-000000000000", [t, "done"], title=t, minutes_ago=n
        )
        for n, t in enumerate(TITLES)
    ]
    asyncio.run(insert_sessions(data_dir, sessions))
    argv = [sys.executable, "-c", START, "--data-dir", str(data_dir), "--all"]
    kept = data_dir / "first-page.json"
    pane.start(argv, size)
    first = pane.screens_until(TITLES[0])
    assert APP_ONLY in first[-1]
    deadline = time.monotonic() + 30
    while not kept.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kept.exists(), "the first start kept no page"
    pane.tmux("send-keys", "-t", "panel", "C-q")
    return argv


# Wide, two-line rows beside the preview; and narrow and short: one-line rows, stacked.
@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
def test_a_warm_start_draws_its_rows_before_the_app_in_the_app_s_cells(
    tmp_path: Path, pane: Pane, size: tuple[int, int]
) -> None:
    data_dir = tmp_path / "data"
    argv = a_start_that_kept_its_page(pane, data_dir, size)

    pane.start(argv, size)
    screens = pane.screens_until(APP_ONLY)
    early = next(s for s in screens if TITLES[0] in s)
    assert APP_ONLY not in early  # the rows came before the app drew anything
    app_frame = screens[-1]  # the app's first frame
    early_lines, app_lines = early.splitlines(), app_frame.splitlines()
    drawn = [(i, line.rstrip()) for i, line in enumerate(early_lines) if line.strip()]
    assert len(drawn) >= 8  # the list's height
    for i, line in drawn:
        assert app_lines[i].startswith(line), f"row line {i} moved:\n{early}\n---\n{app_frame}"


def test_a_start_after_the_store_changed_draws_nothing_first_but_keeps_the_rows_height(
    tmp_path: Path, pane: Pane
) -> None:
    """The page is stale, so nothing is drawn before the app; the app's first frame still
    has the one-line rows of a short list, as the page kept for this size had them."""
    data_dir = tmp_path / "data"
    argv = a_start_that_kept_its_page(pane, data_dir, (80, 24))
    newer = "Added later"
    asyncio.run(
        insert_sessions(
            data_dir,
            [session_with("5e55ffff-0000-4000-8000-000000000000", [newer, "ok"], title=newer)],
        )
    )

    pane.start(argv, (80, 24))
    screens = pane.screens_until(APP_ONLY)
    assert all(newer not in screen and TITLES[0] not in screen for screen in screens[:-1])
    first_frame = screens[-1].splitlines()
    at = next(i for i, line in enumerate(first_frame) if TITLES[0] in line)
    assert TITLES[1] in first_frame[at + 1]  # one line a row, from the first frame on


def test_a_start_in_a_project_without_sessions_says_where_the_others_are_from_its_first_frame(
    tmp_path: Path, pane: Pane
) -> None:
    """Nothing is kept for an empty list, so nothing is drawn before the app; the app's
    first frame already says what the other projects hold (never "No delegate sessions
    yet", which is for a store with none)."""
    data_dir = tmp_path / "data"
    sessions = [
        session_with(
            f"5e55{n:04d}-0000-4000-8000-000000000000",
            [t, "done"],
            title=t,
            minutes_ago=n,
            cwd="/srv/elsewhere",
        )
        for n, t in enumerate(TITLES[:3])
    ]
    asyncio.run(insert_sessions(data_dir, sessions))
    project = tmp_path / "payments-api"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    pane.cwd = project
    pane.start([sys.executable, "-c", START, "--data-dir", str(data_dir)], (80, 24))
    screens = pane.screens_until("3 sessions in other projects")
    assert not [s for s in screens if "No delegate sessions yet" in s], screens
    first_frame = next(s for s in screens if APP_ONLY in s)
    assert "ctrl+a shows them" in first_frame, first_frame
    assert not (data_dir / "first-page.json").exists()
    pane.tmux("send-keys", "-t", "panel", "C-q")
