"""A signal handled by this process for the length of a block: which handler, and when the
previous one comes back (signals belong to the main thread; elsewhere nothing changes)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

Handler = Callable[[int, FrameType | None], Any]


@contextlib.contextmanager
def handling(signum: int, handler: Handler) -> Iterator[None]:
    """``handler`` for ``signum`` while the block runs, the previous handler after it."""
    try:
        previous = signal.signal(signum, handler)
    except ValueError:  # not the main thread: signals are not ours to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signum, previous)
