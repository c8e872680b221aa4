"""JSON Lines readers that never hold more than one capped line in memory.

Offsets are byte offsets into the file. A line is complete only when its
newline has been written: the bytes after the last newline are a writer
mid-append (a *torn* line) and are left for the next read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Lines longer than this are skipped (and counted) without being buffered whole."""

FORWARD_CHUNK = 1024 * 1024
BACKWARD_CHUNK = 64 * 1024


BOM = b"\xef\xbb\xbf"


class BadLine(ValueError):
    """A line that is not a JSON object (bad JSON, invalid UTF-8, a bare value, too deep)."""


def loads(line: bytes) -> dict[str, Any]:
    """Decode one line; anything but a JSON object is a :class:`BadLine`.

    A UTF-8 byte-order mark before the line (editors put one on the first) is
    dropped. orjson refuses nesting over 1,024 levels (a ``JSONDecodeError``);
    the other errors are caught too so no decoder can fail an import.
    """
    if line.startswith(BOM):
        line = line[len(BOM) :]
    try:
        value = orjson.loads(line)
    except (ValueError, RecursionError, OverflowError, MemoryError) as exc:
        # JSONDecodeError and UnicodeDecodeError are ValueErrors.
        raise BadLine(str(exc)) from exc
    if not isinstance(value, dict):
        raise BadLine(f"a JSON {type(value).__name__}, not an object")
    return value


class ForwardLines:
    """Complete lines from ``start`` to the last newline, as ``(offset, bytes | None)``.

    ``None`` stands for a line over ``cap`` bytes, skipped while streaming past it.
    After iterating, ``end`` is the offset just past the last complete line and
    ``bytes_read`` what was read from the file.
    """

    def __init__(
        self, f: BinaryIO, start: int, cap: int = MAX_LINE_BYTES, chunk: int = FORWARD_CHUNK
    ) -> None:
        self._f, self.start, self._cap, self._chunk = f, start, cap, chunk
        self.end = start
        self.bytes_read = 0

    def __iter__(self) -> Iterator[tuple[int, bytes | None]]:
        f, cap = self._f, self._cap
        f.seek(self.start)
        buf = b""
        buf_at = self.start  # file offset of buf[0]
        skip_from: int | None = None  # start of an oversized line being skipped
        while data := f.read(self._chunk):
            self.bytes_read += len(data)
            if skip_from is not None:
                nl = data.find(b"\n")
                if nl < 0:
                    buf_at += len(data)
                    continue
                yield skip_from, None
                buf_at += nl + 1
                self.end = buf_at
                data = data[nl + 1 :]
                skip_from = None
            buf = buf + data if buf else data
            i = 0
            while (nl := buf.find(b"\n", i)) >= 0:
                yield buf_at + i, (buf[i:nl] if nl - i <= cap else None)
                i = nl + 1
            buf_at += i
            self.end = buf_at
            buf = buf[i:]
            if len(buf) > cap:
                skip_from = buf_at
                buf_at += len(buf)
                buf = b""


class BackwardLines:
    """Complete lines from ``end`` back to the start of the file, newest first.

    Yields ``(offset, bytes | None)`` like :class:`ForwardLines`. With
    ``end=None`` reading starts at the end of the file and a torn last line is
    ignored; otherwise ``end`` must be the offset where a line starts (the
    preview cursor) and reading continues with the line before it.
    """

    def __init__(
        self,
        f: BinaryIO,
        end: int | None = None,
        cap: int = MAX_LINE_BYTES,
        chunk: int = BACKWARD_CHUNK,
    ) -> None:
        self._f, self._end, self._cap, self._chunk = f, end, cap, chunk
        self.bytes_read = 0

    def _start(self) -> tuple[int, bool]:
        """Where to read back from, and whether the first segment is a torn line."""
        f = self._f
        size = f.seek(0, 2)
        if self._end is not None:
            end = min(self._end, size)
            if end <= 0:
                return 0, False
            f.seek(end - 1)
            last = f.read(1)
            self.bytes_read += 1
            # A cursor always points just past a newline; anything else means the
            # file changed under us, and the fragment before it is not a whole line.
            return (end - 1, False) if last == b"\n" else (end, True)
        if size == 0:
            return 0, False
        f.seek(size - 1)
        last = f.read(1)
        self.bytes_read += 1
        return (size - 1, False) if last == b"\n" else (size, True)

    def __iter__(self) -> Iterator[tuple[int, bytes | None]]:
        f, cap = self._f, self._cap
        pos, drop_next = self._start()
        parts: list[bytes] = []  # pieces of the line being assembled, rightmost first
        held = 0
        skipping = False
        while pos > 0:
            n = min(self._chunk, pos)
            pos -= n
            f.seek(pos)
            data = f.read(n)
            self.bytes_read += len(data)
            right = len(data)
            while (nl := data.rfind(b"\n", 0, right)) >= 0:
                if drop_next:
                    drop_next = False
                elif skipping:
                    yield pos + nl + 1, None
                else:
                    piece = data[nl + 1 : right]
                    line = piece + b"".join(reversed(parts)) if parts else piece
                    if line:
                        yield pos + nl + 1, (line if len(line) <= cap else None)
                parts, held, skipping = [], 0, False
                right = nl
            if not skipping and right:
                parts.append(data[:right])
                held += right
                if held > cap:
                    parts, held, skipping = [], 0, True
        if drop_next:
            return
        if skipping:
            yield 0, None
        elif held:
            yield 0, b"".join(reversed(parts))
