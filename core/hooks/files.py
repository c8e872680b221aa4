"""Reading and writing the agents' own settings files without trusting them.

A settings file is another program's (and a person's): it is read only if it is
a regular file of sensible size, and written atomically (a temporary file in the
same folder, then a rename) so Claude Code or Codex never read half of it. A
link (a dotfiles repository) is followed: the file it names is the one written,
and the link stays a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.atomic_files import disk_full_as_error, replace_atomically
from core.errors import HookSettingsUnusable

MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A settings file larger than this is refused (they are a few kilobytes)."""


def read_settings_text(path: Path) -> str | None:
    """The text of ``path``; None when there is no such file.

    Anything but a regular UTF-8 file is a :class:`HookSettingsUnusable` naming it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HookSettingsUnusable(f"{path} cannot be read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HookSettingsUnusable(f"{path} is not a regular file; delegate leaves it alone")
        if info.st_size > MAX_SETTINGS_BYTES:
            raise HookSettingsUnusable(
                f"{path} is larger than {MAX_SETTINGS_BYTES // (1024 * 1024)} MiB"
            )
        data = os.read(fd, MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise HookSettingsUnusable(f"{path} cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HookSettingsUnusable(f"{path} is not UTF-8 text") from None


def write_settings_text(path: Path, text: str) -> None:
    """Replace ``path`` (the file a link names, if it is one) with ``text``, atomically,
    keeping its permissions (a new file is private to its owner).

    A full disk is :class:`~core.errors.DiskFull` naming the folder; the file is kept.
    """
    target = Path(os.path.realpath(path))
    try:
        with disk_full_as_error(target.parent):
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o600
        replace_atomically(
            target.parent,
            target.name,
            text.encode("utf-8"),
            mode=mode,
            exact_mode=True,
            prefix=f".{target.name}.",
        )
    except OSError as exc:
        raise HookSettingsUnusable(f"{path} cannot be written: {exc.strerror}") from None


def remove_settings_file(path: Path) -> None:
    """Remove ``path`` (it did not exist before delegate wrote it)."""
    try:
        os.unlink(os.path.realpath(path))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise HookSettingsUnusable(f"{path} cannot be removed: {exc.strerror}") from None
