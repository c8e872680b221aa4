"""The panel's first page, drawn before the app has imported anything.

A warm start spends most of its time importing: Textual alone takes about a third
of a second on a small machine, before any row can be drawn. So the panel keeps the
text of its first page (:meth:`FirstPage.save`, from the picker), and the next start
that finds it current draws it at once, in the alternate screen where the app then
draws its first frame over it: the same rows, in the same cells.

"Current" is checked, not assumed. The page is drawn only when the terminal has the
size it was kept at, the command line, folder, settings file and the code that lays
the rows out are those it was kept for, and the store's change counter has not moved
since the rows were read. Each row's age is written afresh. Anything else, or a file
that is not a regular file of the expected shape, draws nothing: the app starts as
it would have.

Keys typed before the app takes the terminal wait in it (echo is off meanwhile, so
they do not print over the rows), and the app reads them once it starts.

This runs before the imports it is there to hide, so it imports little: the standard
library's cheapest modules, each where it is needed, and of ours only the data folder
and the ages.
"""

from __future__ import annotations

import contextlib
import os
import sys

from core.data_folder import CONFIG_FILENAME, DB_FILENAME, connect_read_only, resolve_data_dir
from tui.shared.ages import AGE_WIDTH, ago

TYPE_CHECKING = False  # typing's own costs a start more than the page takes to draw
if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime
    from pathlib import Path
    from typing import Any, TextIO

FILENAME = "first-page.json"
FORMAT = 1
MAX_FILE_BYTES = 256 * 1024
MAX_CELLS = 1000  # a terminal's columns or lines beyond this is not one a page was kept for
# What lays the rows out: a change to one of these (an upgrade) makes a kept page stale.
LOOK_FILES = (
    "first_page.py",
    "app.tcss",
    "screens/session_picker.py",
    "screens/session_picker.tcss",
    "widgets/session_list.py",
    "widgets/session_row.py",
    "widgets/context_meter.py",
)
LEAVE = "\x1b[?1049l\x1b[?25h"  # the alternate screen left, the cursor shown

StartKey = dict[str, "Any"]
"""What a start's first page depends on besides the store and the terminal (JSON)."""


class PageRows:
    """The list's first page as the app drew it: its text, where it sits, its ages."""

    __slots__ = (
        "ages",
        "compact",
        "lines",
        "origin",
        "rows_colours",
        "screen_colours",
        "size",
        "stamp",
        "width",
    )

    def __init__(
        self,
        *,
        stamp: int,
        size: tuple[int, int],
        origin: tuple[int, int],
        width: int,
        lines: Sequence[str],
        ages: Sequence[tuple[int, int, int]] = (),
        compact: bool = False,
        screen_colours: str = "",
        rows_colours: str = "",
    ) -> None:
        self.stamp = stamp  # the store's change counter when the rows were read
        self.compact = compact  # rows of one line (the list was short)
        # The app's colours (SGR sequences): its screen's, and its list's, behind the rows.
        self.screen_colours = screen_colours
        self.rows_colours = rows_colours
        self.size = size  # the terminal's (columns, lines)
        self.origin = origin  # the cell (x, y) of the first row's first character
        self.width = width  # the rows' width in cells
        self.lines = tuple(lines)
        # (line, column, moment in µs since the epoch): where each row's age is written.
        self.ages = tuple(ages)

    def as_json(self) -> dict[str, Any]:
        return {
            "stamp": self.stamp,
            "size": list(self.size),
            "origin": list(self.origin),
            "width": self.width,
            "lines": list(self.lines),
            "ages": [list(a) for a in self.ages],
            "compact": self.compact,
            "screen_colours": self.screen_colours,
            "rows_colours": self.rows_colours,
        }


def panel_data_dir(argv: Sequence[str]) -> Path | None:
    """The data folder of a command line that opens the panel, or None for any other.

    Only ``--all`` and ``--data-dir DIR`` are read (the panel's own options); anything
    else, an abbreviation included, is left to the command line's parser.
    """
    explicit: str | None = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--all":
            continue
        if arg == "--data-dir" and args and not args[0].startswith("-"):
            explicit = args.pop(0)
        elif arg.startswith("--data-dir="):
            explicit = arg.removeprefix("--data-dir=")
        else:
            return None
    return resolve_data_dir(explicit)


def _identity(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns]


def start_key(argv: Sequence[str], data_dir: Path) -> StartKey:
    """This start's key: the command line, the folder, the settings file and the code."""
    here = os.path.dirname(__file__)
    return {
        "argv": list(argv),
        "cwd": os.getcwd(),
        # The terminal's kind: the colours kept are written as the app wrote them for it.
        "term": [os.environ.get(name) for name in ("TERM", "COLORTERM", "NO_COLOR")],
        "settings": _identity(os.path.join(data_dir, CONFIG_FILENAME)),
        "look": [_identity(os.path.join(here, name)) for name in LOOK_FILES],
    }


def store_stamp(data_dir: Path) -> int | None:
    """The store's change counter, read-only; None when it cannot be read."""
    import sqlite3
    import stat

    path = os.path.join(data_dir, DB_FILENAME)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        db = connect_read_only(path, timeout=0.05)
        try:
            row = db.execute("SELECT seq FROM change_counter WHERE id = 1").fetchone()
        finally:
            db.close()
    except (OSError, sqlite3.Error):
        return None
    return row[0] if row is not None and type(row[0]) is int else None


def _read_regular(path: str) -> bytes | None:
    """The file's bytes, if it is a regular file of a sane size (no link, FIFO or device)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_FILE_BYTES:
            return None
        return os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _int(value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(value)
    return value


def _pair(value: Any, low: int, high: int) -> tuple[int, int]:
    if type(value) is not list or len(value) != 2:
        raise ValueError(value)
    return (_int(value[0], low, high), _int(value[1], low, high))


def _shown_as_is(line: Any, width: int) -> bool:
    """Text a terminal shows as written: no control or format characters, within width."""
    return type(line) is str and len(line) <= width and (line.isprintable() or not line)


def _colours(value: Any) -> str:
    """An SGR sequence that sets colours (``ESC [ digits and semicolons m``), or ""."""
    if type(value) is not str or len(value) > 64:
        raise ValueError("colours")
    if value and not (
        value.startswith("\x1b[") and value.endswith("m") and value[2:-1].replace(";", "").isdigit()
    ):
        raise ValueError("colours")
    return value


def rows_from_json(data: Any) -> PageRows:
    """``PageRows`` from the file's JSON, every field checked (ValueError otherwise)."""
    if type(data) is not dict:
        raise ValueError("rows")
    size = _pair(data["size"], 1, MAX_CELLS)
    origin = _pair(data["origin"], 0, MAX_CELLS)
    width = _int(data["width"], 1, size[0] - origin[0])
    lines = data["lines"]
    if type(lines) is not list or len(lines) > size[1] - origin[1]:
        raise ValueError("lines")
    if not all(_shown_as_is(line, width) for line in lines):
        raise ValueError("line")
    ages = []
    for slot in data["ages"]:
        if type(slot) is not list or len(slot) != 3:
            raise ValueError("age")
        line = _int(slot[0], 0, len(lines) - 1)
        column = _int(slot[1], 0, width - AGE_WIDTH)
        ages.append((line, column, _int(slot[2], 0, 2**62)))
    if type(data["compact"]) is not bool:
        raise ValueError("compact")
    return PageRows(
        stamp=_int(data["stamp"], 0, 2**62),
        compact=data["compact"],
        screen_colours=_colours(data["screen_colours"]),
        rows_colours=_colours(data["rows_colours"]),
        size=size,
        origin=origin,
        width=width,
        lines=lines,
        ages=ages,
    )


def paint(rows: PageRows, now: datetime) -> str | None:
    """The terminal output that draws ``rows``, each age written for ``now``.

    None when an age no longer fits its column. Auto-wrap is off while drawing, so a
    line can never scroll the screen; the cursor ends where it started, so the app's
    own switch to the alternate screen saves the shell's place, not ours.
    """
    from datetime import UTC, datetime

    lines = list(rows.lines)
    for line_no, column, moment_us in rows.ages:
        moment = datetime.fromtimestamp(moment_us / 1_000_000, UTC)
        age = f"{ago(moment, now):>{AGE_WIDTH}}"
        if len(age) != AGE_WIDTH:
            return None
        line = lines[line_no].ljust(column + AGE_WIDTH)
        lines[line_no] = line[:column] + age + line[column + AGE_WIDTH :]
    x, y = rows.origin
    # The screen cleared in the app's colours, then each row across the list's width in
    # the list's: the app's first frame then changes only what it adds.
    out = [f"\x1b[?1049h\x1b7{rows.screen_colours}\x1b[2J\x1b[?25l\x1b[?7l"]
    for i, line in enumerate(lines):
        out.append(f"\x1b[{y + i + 1};{x + 1}H{rows.rows_colours}{line.ljust(rows.width)}")
    out.append("\x1b[0m\x1b[?7h\x1b8")
    return "".join(out)


class FirstPage:
    """One start's first page: the page kept in a data folder for this start's key,
    and, once :meth:`draw` found it current, the terminal it was drawn on."""

    def __init__(self, data_dir: Path, key: StartKey) -> None:
        self.path = os.path.join(data_dir, FILENAME)
        self.data_dir = data_dir
        self.key = key
        self.drawn: PageRows | None = None  # what draw() put on the terminal
        # The page kept for this terminal's size, current or not (a start's best guess
        # at how the list will look).
        self.kept_at_this_size: PageRows | None = None
        self._out: TextIO | None = None
        self._restore_echo: list[Any] | None = None
        self._handed_over = False

    @property
    def one_line_rows(self) -> bool:
        """Whether the page kept for this terminal's size had one-line rows: the app's
        first frame then has them too (as the page drawn, if it was)."""
        return self.kept_at_this_size is not None and self.kept_at_this_size.compact

    def load(self) -> PageRows | None:
        """The kept rows, if the file is ours, well formed and kept for this key."""
        import json

        raw = _read_regular(self.path)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            if type(data) is not dict or data.get("format") != FORMAT:
                return None
            if data.get("key") != self.key:
                return None
            return rows_from_json(data.get("rows"))
        except (ValueError, KeyError, TypeError, RecursionError):
            return None

    def save(self, rows: PageRows) -> None:
        """Keep ``rows`` for the next start: written whole (a new file, then renamed), 0600."""
        import json

        payload = {"format": FORMAT, "key": self.key, "rows": rows.as_json()}
        body = json.dumps(payload, ensure_ascii=False).encode()
        partial = os.path.join(self.data_dir, f".{FILENAME}.{os.getpid()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        fd = os.open(partial, flags, 0o600)
        try:
            try:
                view = memoryview(body)
                while view:  # a short write is not the whole page
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(partial, self.path)
        except BaseException:
            # A full disk (or anything else) leaves the kept page as it was, and no
            # half-written partial file beside it.
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise

    def forget(self) -> None:
        """Drop the kept page: the list a start shows is empty, or cannot be kept."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def draw(self, out: TextIO = sys.stdout) -> bool:
        """Draw the kept page on ``out`` if it is current; whether it was drawn."""
        from datetime import UTC, datetime

        try:
            columns, lines = os.get_terminal_size(out.fileno())
        except (OSError, ValueError):
            return False
        rows = self.load()
        if rows is None or rows.size != (columns, lines):
            return False
        self.kept_at_this_size = rows
        if store_stamp(self.data_dir) != rows.stamp:
            return False
        text = paint(rows, datetime.now(UTC))
        if text is None:
            return False
        self._out = out
        self._restore_echo = _echo_off(out.fileno())
        try:
            out.write(text)
            out.flush()
        except OSError:
            self.close()
            return False
        self.drawn = rows
        return True

    def hand_over(self) -> None:
        """Give the terminal back as it was (echo on), just before the app takes it."""
        self._handed_over = True
        self._echo_back()

    def close(self) -> None:
        """After the app, or instead of it: leave the alternate screen the app never took."""
        self._echo_back()
        if self._out is not None and not self._handed_over:
            try:
                self._out.write(LEAVE)
                self._out.flush()
            except OSError:
                pass
        self._out = None

    def _echo_back(self) -> None:
        if self._restore_echo is None or self._out is None:
            return
        import termios

        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self._out.fileno(), termios.TCSANOW, self._restore_echo)
        self._restore_echo = None


def _echo_off(fd: int) -> list[Any] | None:
    """Turn the terminal's echo off; the attributes to restore, or None if it is not one."""
    import termios

    try:
        before = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        quiet[3] &= ~termios.ECHO
        # TCSANOW, not TCSAFLUSH: keys already typed stay for the app.
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (termios.error, OSError):
        return None
    return before


def prepare(argv: Sequence[str], out: TextIO = sys.stdout) -> FirstPage | None:
    """The first page of a panel start on a terminal; None for anything else."""
    if os.environ.get("TERM") in (None, "dumb"):
        return None
    try:
        if not (out.isatty() and sys.stdin.isatty()):
            return None
    except ValueError:  # a closed stream
        return None
    data_dir = panel_data_dir(argv)
    if data_dir is None:
        return None
    return FirstPage(data_dir, start_key(argv, data_dir))
