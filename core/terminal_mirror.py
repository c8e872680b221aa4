"""An interactive CLI run on a terminal of its own, mirrored to this process's terminal,
keeping the last of what it printed: when it fails, its own words can be shown after
it exits.

The CLI gets a pseudo-terminal (its controlling terminal, sized as ours and resized with
it) and owns it as it would own ours: everything it writes is copied to our terminal as
it comes, everything typed (our terminal in raw mode meanwhile) is copied to it, so
``ctrl+c`` and the CLI's own keys reach it. A CLI prints its errors where it pleases
(Claude Code's "No conversation found" goes to its standard output), so what is kept is
its terminal's last :data:`TAIL_BYTES`, never more, and only in memory. :func:`last_words`
makes text of it: escape sequences and control characters gone, the last lines, redacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import signal
import struct
import sys
import termios
import tty
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from core.redact import redact
from core.signal_handlers import handling

TAIL_BYTES = 64 * 1024  # what is kept of the CLI's output: its last screenful, and more
SAID_LINES = 12  # what is shown of it
SAID_LINE_CHARS = 240

# Takes the pseudo-terminal as the controlling terminal of the new session the CLI
# starts in (``start_new_session``), then becomes the CLI. Python's ``preexec_fn``
# cannot do this safely in a process with threads; a tiny exec'd step can.
_TAKE_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)

# Escape sequences: CSI (colours, cursor moves, modes), OSC (titles, links; BEL or ST
# ends them), DCS/APC/PM/SOS strings, and the two-character ones.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# Cursor moves along a line: forward by N (``C``), or to column N (``G``).
_CURSOR_MOVES = re.compile(r"(?:\x1b\[|\x9b)(\d*)([CG])")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Mirrored:
    """How the CLI ended: its exit status and the last bytes it wrote to its terminal."""

    code: int
    tail: bytes


def last_words(tail: bytes, lines: int = SAID_LINES) -> str:
    """The last ``lines`` lines of text a CLI left on its terminal, made safe to show:
    escape sequences and control characters removed (a line rewritten with ``\\r``
    keeps its last writing; cursor moves along a line keep the gaps a terminal shows),
    each line bounded, secrets redacted; "" when none."""
    text = tail.decode("utf-8", errors="replace").replace("\r\n", "\n")
    kept: list[str] = []
    for raw in text.split("\n"):
        # A carriage return mid-line rewrote it; one at its end (``\r\r\n``) did not.
        line = _placed(raw.rstrip("\r").rsplit("\r", 1)[-1]).rstrip()
        if line.strip():
            kept.append(line if len(line) <= SAID_LINE_CHARS else line[: SAID_LINE_CHARS - 1] + "…")
    return redact("\n".join(kept[-lines:]))


def _placed(raw: str) -> str:
    """One line's visible text: a terminal UI may place words with cursor moves instead
    of spaces (Claude Code writes ``Welcome\\x1b[9Gto``: "to" at column 9), so a move
    forward leaves the gap a terminal shows and a move back lets later text overwrite."""
    cells: list[str] = []
    cursor = 0

    def write(text: str) -> None:
        nonlocal cursor
        for char in _visible(text):
            if cursor < len(cells):
                cells[cursor] = char
            else:
                cells.extend(" " * (cursor - len(cells)) + char)
            cursor += 1

    at = 0
    for move in _CURSOR_MOVES.finditer(raw):
        write(raw[at : move.start()])
        count = min(int(move.group(1) or 1), SAID_LINE_CHARS)
        cursor = cursor + count if move.group(2) == "C" else count - 1
        at = move.end()
    write(raw[at:])
    return "".join(cells)


def _visible(text: str) -> str:
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


async def run_mirrored(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    stdin: int = 0,
    stdout: int = 1,
    tail_bytes: int = TAIL_BYTES,
    started: Callable[[asyncio.subprocess.Process], None] | None = None,
) -> Mirrored:
    """Run ``argv`` on a pseudo-terminal mirrored to ``stdin``/``stdout`` until it exits.

    ``started`` is given the process once it runs (a caller that may end it early).
    Raises :class:`OSError` when it cannot be started (the binary gone, not executable).
    """
    master, slave = os.openpty()
    try:
        _copy_size(stdout, master)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-c",
            _TAKE_TERMINAL,
            *argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except BaseException:
        os.close(master)
        os.close(slave)
        raise
    os.close(slave)  # the CLI holds it now: the master reads EOF once every holder is gone
    if started is not None:
        started(process)
    tail = bytearray()
    loop = asyncio.get_running_loop()

    def from_cli() -> None:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the CLI's side is closed
            data = b""
        if not data:
            loop.remove_reader(master)
            return
        _write_all(stdout, data)
        tail.extend(data)
        if len(tail) > tail_bytes:
            del tail[: len(tail) - tail_bytes]

    def from_person() -> None:
        try:
            data = os.read(stdin, 4096)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(stdin)
            return
        with contextlib.suppress(OSError):
            _write_all(master, data)

    typing = os.isatty(stdin)
    try:
        with _raw(stdin if typing else None), _resized_with(stdout, master):
            loop.add_reader(master, from_cli)
            if typing:
                loop.add_reader(stdin, from_person)
            try:
                code = await process.wait()
            except asyncio.CancelledError:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                await process.wait()
                raise
            finally:
                loop.remove_reader(master)
                if typing:
                    loop.remove_reader(stdin)
            _drain(master, stdout, tail)
    finally:
        os.close(master)
    return Mirrored(code, bytes(tail[-tail_bytes:]))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[written:]


def _drain(master: int, stdout: int, tail: bytearray) -> None:
    """What the CLI wrote just before it exited and is still in the terminal's buffer."""
    os.set_blocking(master, False)
    for _ in range(64):
        try:
            data = os.read(master, 65536)
        except OSError:
            return
        if not data:
            return
        _write_all(stdout, data)
        tail.extend(data)


def _copy_size(source: int, target: int) -> None:
    with contextlib.suppress(OSError):
        size = fcntl.ioctl(source, termios.TIOCGWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
        fcntl.ioctl(target, termios.TIOCSWINSZ, size)


@contextlib.contextmanager
def _raw(fd: int | None) -> Iterator[None]:
    """Our terminal in raw mode: every key (``ctrl+c`` too) goes to the CLI's terminal,
    whose own line discipline does what the CLI asked of it."""
    if fd is None:
        yield
        return
    try:
        before = termios.tcgetattr(fd)
        tty.setraw(fd, termios.TCSANOW)
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, before)


def _resized_with(source: int, target: int) -> contextlib.AbstractContextManager[None]:
    """The CLI's terminal takes our terminal's size whenever ours changes."""

    def resized(signum: int, frame: FrameType | None) -> None:
        _copy_size(source, target)

    return handling(signal.SIGWINCH, resized)
