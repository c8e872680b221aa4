"""The ``delegate`` command's entry point: the command line, imported with the
garbage collector paused."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for start-up imports.

    Importing the command line and the panel builds tens of thousands of objects
    that live as long as the process (pydantic models, Textual's styles and
    widgets' classes); the collections they trigger free nothing and cost about a
    tenth of the start. Reference counting still frees everything else.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def main() -> int:
    with collector_paused():
        from tui.cli import main as run
    return run()
