"""Where delegate keeps its data: the folder and the files in it.

Resolution order for the data folder: ``--data-dir`` > ``$DELEGATE_HOME`` >
the platform's user data folder. Nothing is created until a command needs it.

Standard library only: the panel's first page is drawn from this folder before
anything heavier is imported (``tui.first_page``).
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing's import would cost the first page's start more than it needs
if TYPE_CHECKING:
    import sqlite3

DB_FILENAME = "delegate.sqlite3"
CONFIG_FILENAME = "config.toml"


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder, without creating it."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("DELEGATE_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs  # deferred: only this branch needs it

    return platformdirs.user_data_path("delegate", appauthor=False)


def connect_read_only(path: str | os.PathLike[str], *, timeout: float = 5.0) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at ``path``; never creates it.

    ``timeout``: how long a read waits for a writer's lock (seconds).
    """
    import sqlite3

    # The path as a URI's path: '%' would escape, and '?' or '#' end it.
    uri_path = os.fspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return sqlite3.connect(f"file:{uri_path}?mode=ro", uri=True, timeout=timeout)
