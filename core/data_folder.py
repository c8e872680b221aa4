"""Where delegate keeps its data: the folder and the files in it.

Resolution order for the data folder: ``--data-dir`` > ``$DELEGATE_HOME`` >
the platform's user data folder. Nothing is created until a command needs it.

Standard library only: the panel's first page is drawn from this folder before
anything heavier is imported (``tui.first_page``).
"""

import os
from pathlib import Path

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
