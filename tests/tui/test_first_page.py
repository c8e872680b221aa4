"""The first page a start draws before its imports (``tui.first_page``), on a real pty.

Drawn only when it is current; anything on disk that is not a page kept for this
start, of the expected shape, draws nothing. Keys typed before the app takes the
terminal stay in it, and echo comes back whatever happens.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import pytest
from support import db_path

from core.clock import to_us
from core.config import CONFIG_FILENAME
from core.store import Store
from tui import first_page
from tui.first_page import FirstPage, PageRows

ROOT = Path(__file__).resolve().parents[2]
SIZE = (100, 30)
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
# The only sequences a drawing may hold: cursor moves, the alternate screen, cursor
# save and restore, clearing, hiding the cursor, auto-wrap off and on, and colours.
ALLOWED = re.compile(r"\x1b\[\d+;\d+H|\x1b\[\?(?:1049|25|7)[hl]|\x1b[78]|\x1b\[2J|\x1b\[[\d;]*m")


def rows(stamp: int, **changes: Any) -> PageRows:
    fields: dict[str, Any] = {
        "stamp": stamp,
        "size": SIZE,
        "origin": (1, 4),
        "width": 70,
        "lines": [
            "idle     codex       fix the flaky login test",
            "           3h ago · 12k used · 94% left · 3 turns · /src/app",
            "idle     claude-code tidy the README",
            "           2d ago · usage unknown · 1 turn · /src/docs",
        ],
        "ages": [
            (1, 9, to_us(NOW - timedelta(hours=3))),
            (3, 9, to_us(NOW - timedelta(days=2))),
        ],
    }
    return PageRows(**(fields | changes))


async def make_store(data_dir: Path) -> int:
    """A real store; its change counter."""
    data_dir.mkdir(parents=True, exist_ok=True)
    store = await Store.open(db_path(data_dir))
    try:
        return (await store.changes.head()).seq
    finally:
        await store.close()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def kept(data_dir: Path) -> FirstPage:
    return FirstPage(data_dir, first_page.start_key(["--all"], data_dir))


class Terminal:
    """A pty of ``SIZE``: the program writes to ``out``; the test reads ``screen()``."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        self.out: TextIO = os.fdopen(slave, "w", encoding="utf-8")

    def written(self) -> str:
        chunks = []
        os.set_blocking(self.master, False)
        try:
            while True:
                chunks.append(os.read(self.master, 65536))
        except BlockingIOError:
            pass
        return b"".join(chunks).decode()

    def echoes(self) -> bool:
        return bool(termios.tcgetattr(self.out.fileno())[3] & termios.ECHO)

    def close(self) -> None:
        self.out.close()
        os.close(self.master)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    term.close()


def grid(drawing: str) -> dict[tuple[int, int], str]:
    """The cells a drawing writes (only cursor moves and text are expected in it)."""
    cells: dict[tuple[int, int], str] = {}
    row = col = 0
    for piece in re.split(r"(\x1b\[[\d;?]*[A-Za-z]|\x1b[78])", drawing):
        if moved := re.fullmatch(r"\x1b\[(\d+);(\d+)H", piece):
            row, col = int(moved[1]) - 1, int(moved[2]) - 1
        elif not piece.startswith("\x1b"):
            for char in piece:
                cells[(row, col)] = char
                col += 1
    return cells


def line_at(cells: dict[tuple[int, int], str], row: int) -> str:
    return "".join(cells.get((row, c), " ") for c in range(SIZE[0])).rstrip()


# --- which command lines open the panel -----------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "default"),
        (["--all"], "default"),
        (["--data-dir", "/x/d"], "/x/d"),
        (["--all", "--data-dir=/x/d"], "/x/d"),
        (["sessions", "list"], None),
        (["--al"], None),  # an abbreviation is the parser's to read
        (["-h"], None),
        (["--data-dir", "--all"], None),
        (["--data-dir"], None),
    ],
)
def test_only_the_panel_s_command_line_gets_a_first_page(
    argv: list[str], expected: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DELEGATE_HOME", str(tmp_path))
    found = first_page.panel_data_dir(argv)
    if expected is None:
        assert found is None
    else:
        assert found == (tmp_path if expected == "default" else Path(expected))


# --- what is drawn ---------------------------------------------------------------------


def test_a_drawing_puts_each_line_in_its_cells_with_ages_for_now() -> None:
    later = NOW + timedelta(hours=2)
    drawing = first_page.paint(rows(1), later)
    assert drawing is not None
    assert ALLOWED.sub("", drawing).isprintable()
    cells = grid(drawing)
    assert line_at(cells, 4) == " idle     codex       fix the flaky login test"
    assert line_at(cells, 5) == "            5h ago · 12k used · 94% left · 3 turns · /src/app"
    assert line_at(cells, 7) == "            2d ago · usage unknown · 1 turn · /src/docs"
    # The alternate screen first, and the cursor back where it was at the end.
    assert drawing.startswith("\x1b[?1049h\x1b7")
    assert drawing.endswith("\x1b[0m\x1b[?7h\x1b8")


def test_a_drawing_is_in_the_app_s_colours() -> None:
    screen, listed = "\x1b[38;5;253;48;5;233m", "\x1b[38;5;253;48;5;235m"
    drawing = first_page.paint(rows(1, screen_colours=screen, rows_colours=listed), NOW)
    assert drawing is not None
    assert drawing.index(screen) < drawing.index("\x1b[2J")  # the screen cleared in its colour
    # Each row in the list's colours, across the list's width.
    assert drawing.count(listed + "idle") == 2
    assert f"\x1b[5;2H{listed}{rows(1).lines[0].ljust(70)}\x1b[" in drawing


def test_an_age_that_no_longer_fits_its_column_draws_nothing() -> None:
    centuries = NOW + timedelta(days=365 * 1000)
    assert first_page.paint(rows(1), centuries) is None


# --- kept and loaded -------------------------------------------------------------------


def test_a_kept_page_loads_for_the_same_start_only(
    kept: FirstPage, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data_dir.mkdir()
    kept.save(rows(7))
    assert os.stat(kept.path).st_mode & 0o777 == 0o600
    loaded = kept.load()
    assert loaded is not None
    assert (loaded.stamp, loaded.lines, loaded.ages) == (7, rows(7).lines, rows(7).ages)

    other_argv = FirstPage(data_dir, first_page.start_key([], data_dir))
    assert other_argv.load() is None
    monkeypatch.chdir(tmp_path)
    assert FirstPage(data_dir, first_page.start_key(["--all"], data_dir)).load() is None
    monkeypatch.chdir(ROOT)
    (data_dir / CONFIG_FILENAME).write_text("[panel]\n")  # the settings changed since
    assert FirstPage(data_dir, first_page.start_key(["--all"], data_dir)).load() is None


def _kept_json(kept: FirstPage, data_dir: Path, rows_json: Any) -> None:
    data_dir.mkdir(exist_ok=True)
    payload = {"format": first_page.FORMAT, "key": kept.key, "rows": rows_json}
    Path(kept.path).write_text(json.dumps(payload))


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda r: r["lines"].__setitem__(0, "idle \x1b]52;c;aGk=\x07"), id="escape"),
        pytest.param(lambda r: r["lines"].__setitem__(0, "idle \x9b2J"), id="c1-control"),
        pytest.param(lambda r: r["lines"].__setitem__(0, "x" * 71), id="wider-than-width"),
        pytest.param(lambda r: r.__setitem__("lines", ["x"] * 27), id="below-the-screen"),
        pytest.param(lambda r: r.__setitem__("origin", [40, 4]), id="right-of-the-screen"),
        pytest.param(lambda r: r.__setitem__("size", [0, 30]), id="no-columns"),
        pytest.param(lambda r: r["ages"].append([9, 9, 0]), id="age-on-no-line"),
        pytest.param(lambda r: r["ages"].append([0, 68, 0]), id="age-past-the-width"),
        pytest.param(lambda r: r.__setitem__("stamp", "7"), id="stamp-as-text"),
        pytest.param(lambda r: r.__setitem__("width", True), id="width-as-bool"),
        pytest.param(lambda r: r.pop("lines"), id="no-lines"),
        pytest.param(lambda r: r.__setitem__("compact", 1), id="compact-as-number"),
        pytest.param(lambda r: r.__setitem__("rows_colours", "\x1b]0;title\x07"), id="osc"),
        pytest.param(lambda r: r.__setitem__("screen_colours", "\x1b[2J"), id="not-colours"),
        pytest.param(lambda r: r.__setitem__("rows_colours", "\x1b[" + "1;" * 40 + "m"), id="long"),
    ],
)
def test_a_page_of_the_wrong_shape_is_not_loaded(
    kept: FirstPage, data_dir: Path, spoil: Any
) -> None:
    body = rows(7).as_json()
    spoil(body)
    _kept_json(kept, data_dir, body)
    assert kept.load() is None


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"format": 99}',
        b"[" * 100_000,  # nesting past the parser's recursion
        b'{"format": 1, "key": null}',
    ],
    ids=["empty", "not-json", "a-list", "another-format", "deep", "no-key"],
)
def test_a_file_that_is_not_a_kept_page_is_not_loaded(
    kept: FirstPage, data_dir: Path, content: bytes
) -> None:
    data_dir.mkdir()
    Path(kept.path).write_bytes(content)
    assert kept.load() is None


def test_only_a_regular_file_is_read(kept: FirstPage, data_dir: Path, tmp_path: Path) -> None:
    data_dir.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    kept.save(rows(7))
    os.replace(kept.path, elsewhere)
    os.symlink(elsewhere, kept.path)
    assert kept.load() is None  # a link, even to a good page
    os.unlink(kept.path)
    os.mkfifo(kept.path)
    assert kept.load() is None  # a FIFO: not opened for reading, so no wait
    os.unlink(kept.path)
    Path(kept.path).write_bytes(b" " * (first_page.MAX_FILE_BYTES + 1))
    assert kept.load() is None


# --- the store's counter ---------------------------------------------------------------


async def test_the_store_stamp_is_its_change_counter(data_dir: Path, tmp_path: Path) -> None:
    assert first_page.store_stamp(data_dir) is None  # no store yet
    seq = await make_store(data_dir)
    assert first_page.store_stamp(data_dir) == seq
    not_a_store = tmp_path / "junk"
    not_a_store.mkdir()
    db_path(not_a_store).write_bytes(b"this is not a database" * 100)
    assert first_page.store_stamp(not_a_store) is None


# --- drawn on a terminal ---------------------------------------------------------------


async def test_a_current_page_is_drawn_and_typed_keys_wait_for_the_app(
    kept: FirstPage, data_dir: Path, terminal: Terminal
) -> None:
    seq = await make_store(data_dir)
    kept.save(rows(seq, ages=[]))
    os.write(terminal.master, b"j")  # typed before the start: the app must still get it

    assert kept.draw(terminal.out)
    cells = grid(terminal.written())
    assert line_at(cells, 6) == " idle     claude-code tidy the README"
    assert not terminal.echoes()  # typing meanwhile would print over the rows
    kept.hand_over()
    assert terminal.echoes()
    kept.close()
    assert terminal.written() == ""  # the app took the screen: it leaves it, not us
    slave = terminal.out.fileno()
    raw = termios.tcgetattr(slave)
    raw[3] &= ~termios.ICANON  # as the app does when it takes the terminal
    termios.tcsetattr(slave, termios.TCSANOW, raw)
    os.set_blocking(slave, False)
    assert os.read(slave, 16) == b"j"


async def test_a_start_that_never_reaches_the_app_leaves_the_screen_as_it_was(
    kept: FirstPage, data_dir: Path, terminal: Terminal
) -> None:
    kept.save(rows(await make_store(data_dir), ages=[]))
    assert kept.draw(terminal.out)
    terminal.written()
    kept.close()  # ctrl+c, or an error, before the app
    assert terminal.written() == first_page.LEAVE
    assert terminal.echoes()


async def test_a_page_is_not_drawn_once_the_store_or_the_terminal_changed(
    kept: FirstPage, data_dir: Path, terminal: Terminal
) -> None:
    seq = await make_store(data_dir)
    kept.save(rows(seq + 1))  # the store moved on since (or this page is not of it)
    assert not kept.draw(terminal.out)
    kept.save(rows(seq, size=(120, 30)))
    assert not kept.draw(terminal.out)
    assert terminal.written() == ""
    assert terminal.echoes()


def test_no_first_page_off_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setenv("DELEGATE_HOME", str(tmp_path))
    assert first_page.prepare([], io.StringIO()) is None
    monkeypatch.setenv("TERM", "dumb")
    assert first_page.prepare([], sys.stdout) is None


def test_drawing_imports_nothing_of_the_app(kept: FirstPage, data_dir: Path) -> None:
    """What runs before the first page imports neither Textual, Rich nor pydantic."""
    script = f"""
import sys
from pathlib import Path
from tui import first_page
folder = Path({str(data_dir)!r})
page = first_page.FirstPage(folder, first_page.start_key([], folder))
page.load(); first_page.store_stamp(page.data_dir)
heavy = [m for m in ("textual", "rich", "pydantic", "core.models", "tui.shared.formatting")
         if m in sys.modules]
print(",".join(heavy))
"""
    data_dir.mkdir()
    kept.save(rows(1))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == ""


def _run_on_a_pty(argv: list[str], cwd: Path) -> tuple[int, str]:
    """``argv`` with a pty of ``SIZE`` as its terminal; its exit status and all it wrote."""
    term = Terminal()
    gone = ("TMUX", "DELEGATE_HOME", "COLORTERM", "NO_COLOR")
    env = {k: v for k, v in os.environ.items() if k not in gone}
    env |= {"TERM": "xterm-256color", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        argv, stdin=term.out, stdout=term.out, stderr=term.out, cwd=cwd, env=env
    )
    term.out.close()
    chunks = []
    while True:
        try:
            chunk = os.read(term.master, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(term.master)
    return process.wait(timeout=30), b"".join(chunks).decode(errors="replace")


async def test_an_error_before_the_app_is_shown_after_the_first_page_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real entry point on a terminal: the page drawn, then a store it cannot open."""
    import sqlite3

    data_dir = tmp_path / "data"
    seq = await make_store(data_dir)
    argv = ["--data-dir", str(data_dir)]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERM", "xterm-256color")  # the key as the start below computes it
    monkeypatch.delenv("COLORTERM", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    FirstPage(data_dir, first_page.start_key(argv, data_dir)).save(rows(seq, ages=[]))
    with sqlite3.connect(db_path(data_dir)) as db:
        db.execute("PRAGMA user_version = 999")  # a newer delegate's store

    start = "import sys; from tui.start import main; sys.exit(main())"
    status, written = _run_on_a_pty([sys.executable, "-c", start, *argv], tmp_path)

    assert status == 1
    drawn = written.index("tidy the README")
    left = written.index(first_page.LEAVE, drawn)
    error = written.index("delegate: ", left)  # printed on the screen the shell shows
    assert "newer than this delegate" in written[error:]
    assert "Traceback" not in written
