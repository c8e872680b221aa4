"""The ``delegate`` command's entry point: the panel's kept first page drawn at once,
then the command line, imported with the garbage collector paused."""

from __future__ import annotations

import gc
import sys
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
    from tui import first_page

    # Before any other import: the rows a warm panel start shows come from here.
    page = first_page.prepare(sys.argv[1:])
    if page is not None:
        page.draw()
    try:
        with collector_paused():
            from tui.cli import main as run
        return run(first_page=page)
    except KeyboardInterrupt:  # ctrl+c while the command line is still importing
        return 130
    finally:
        if page is not None:
            page.close()
