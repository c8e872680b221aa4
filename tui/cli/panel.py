"""The panel's start from the command line: settings, keymap and store checked before the
Textual app exists (a broken one is one line and exit 1), then the app over the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.data_folder import DB_FILENAME
from core.errors import DiskFull, StoreError
from tui.cli.output import EXIT_OK

if TYPE_CHECKING:
    from tui.first_page import FirstPage


def run_app(
    data_dir: Path, *, all_projects: bool = False, first_page: FirstPage | None = None
) -> int:
    """Open the session picker (the Textual app) over ``data_dir``.

    Settings (and the keymap's binding ids) are checked before the App exists,
    so a broken ``config.toml`` is one line and exit 1, never a traceback.
    ``first_page``: where the panel keeps its first page for the next start (drawn
    already, this time, if it was current); the app takes the terminal from it.
    """
    import gc

    from core.config import load_settings
    from tui.shared.keymap_check import check_keymap

    # Paused from Textual's import until the picker is on screen (the app turns it back
    # on): what the start builds lives as long as the app (see tui.start.collector_paused),
    # and the young collections its first frame triggers would only delay the rows.
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            from tui.app import create_app

            settings = load_settings(data_dir)
            check_keymap(settings.keymap)
            check_store(data_dir / DB_FILENAME)
            app = create_app(
                data_dir,
                import_sources=(None, None),
                settings=settings,
                scope_cwd=Path.cwd(),
                all_projects=all_projects,
                resume_collector=collecting,
                first_page=first_page,
            )
        except BaseException:
            if first_page is not None:
                first_page.close()  # the error is then printed where the shell will show it
            raise
        if first_page is not None:
            first_page.hand_over()
        app.run()
    finally:
        if collecting:
            gc.enable()
    return app.return_code or EXIT_OK


def check_store(path: Path) -> None:
    """Refuse, before the App exists, a store this delegate cannot open.

    Read-only and without touching the file: the App opens it for real later.
    """
    import sqlite3

    from core.data_folder import connect_read_only
    from core.migrations import SCHEMA_VERSION

    if not path.exists():
        return
    try:
        db = connect_read_only(path)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error as exc:
        from core.atomic_files import sqlite_disk_full

        if sqlite_disk_full(exc, path.parent):  # no room for its -shm: not a damaged file
            raise DiskFull(str(path.parent), f"the store {path.name} cannot open") from None
        raise StoreError(
            f"{path} cannot be read ({exc}); move it aside, or restore a backup with "
            "`delegate store restore BACKUP`"
        ) from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this delegate "
            f"({SCHEMA_VERSION}); upgrade delegate"
        )
