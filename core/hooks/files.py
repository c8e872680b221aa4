"""Reading and writing the agents' own settings files without trusting them.

A settings file is another program's (and a person's): it is read only if it is
a regular file of sensible size, and written atomically (a temporary file in the
same folder, then a rename) so Claude Code or Codex never read half of it. A
link (a dotfiles repository) is followed: the file it names is the one written,
and the link stays a link.

:func:`edit_settings` is how delegate changes one: under an advisory lock (its
own processes wait for each other), it reads, computes the new text, checks
the file is still what it read, and swaps the new text in; where the system
can exchange two names atomically it then checks what it displaced, so a write
by another program (an editor, the agent itself) that landed in between is
given back and the edit made again on top of it. Nothing another program wrote
is lost.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from core.atomic_files import disk_full_as_error, replace_atomically
from core.errors import HookSettingsUnusable

MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A settings file larger than this is refused (they are a few kilobytes)."""
EDIT_TRIES = 200
"""How often an edit is tried again when another program changed the file meanwhile."""
WRITERS_WAIT_S = 2.0
"""How long an edit waits for a program still writing the file it swapped aside."""
LOCK_WAIT_S = 20.0
"""How long an edit waits for another delegate process editing the same file."""


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


def edit_settings(
    path: Path, compute: Callable[[str | None], str | None], lock_file: Path
) -> tuple[str | None, str | None]:
    """Change ``path`` to ``compute(its text)`` (None: no file), losing no concurrent write.

    ``compute`` must be pure: it is called again on the new text whenever another
    program changed the file between the read and the swap. Returns the text the
    edit started from and the one it left (equal when there was nothing to do).
    """
    target = Path(os.path.realpath(path))
    with _locked(lock_file, path):
        for attempt in range(EDIT_TRIES):
            before = read_settings_text(target)
            try:
                after = compute(before)
            except HookSettingsUnusable:
                if read_settings_text(target) == before:
                    raise
                continue  # read while another program was writing it
            if after == before or _swap(target, before, after):
                return before, after
            time.sleep(min(0.001 * (attempt + 1), 0.05))
    raise HookSettingsUnusable(
        f"{path} kept changing while delegate edited it (another program writes it);"
        " nothing was changed, try again"
    )


@contextlib.contextmanager
def _locked(lock_file: Path, path: Path) -> Iterator[None]:
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise HookSettingsUnusable(f"{lock_file} cannot be opened: {exc.strerror}") from None
    try:
        waited_until = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > waited_until:
                    raise HookSettingsUnusable(
                        f"another delegate process is editing {path}; try again"
                    ) from None
                time.sleep(0.001)
        yield
    finally:
        os.close(fd)  # releases the lock


def _swap(target: Path, before: str | None, after: str | None) -> bool:
    """Put ``after`` at ``target`` if it still holds ``before``; False if it did not."""
    if after is None:
        return _remove_if(target, before)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o600
    tmp = _write_temp(target, after, mode)
    try:
        _wait_for_writers(target)  # so the check below sees every write begun so far
        if read_settings_text(target) != before:
            return False
        if before is None:
            return _link_new(tmp, target)
        if not _exchange(tmp, target):
            os.replace(tmp, target)  # checked just above; the system cannot exchange
            return True
        _wait_for_writers(tmp)  # one that opened it before the exchange writes there
        if read_settings_text(tmp) == before:
            return True
        # Another program wrote between the check and the exchange: give its text back.
        if read_settings_text(target) == after:
            _exchange(tmp, target)
        return False
    except OSError as exc:
        raise HookSettingsUnusable(f"{target} cannot be written: {exc.strerror}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _remove_if(target: Path, before: str | None) -> bool:
    if before is None:
        return read_settings_text(target) is None
    aside = target.parent / f".{target.name}.{uuid.uuid4().hex}.removed"
    _wait_for_writers(target)
    if read_settings_text(target) != before:
        return False
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise HookSettingsUnusable(f"{target} cannot be removed: {exc.strerror}") from None
    _wait_for_writers(aside)
    if read_settings_text(aside) == before:
        os.unlink(aside)
        return True
    with contextlib.suppress(OSError):
        _link_new(aside, target)  # another program's text goes back
    with contextlib.suppress(OSError):
        os.unlink(aside)
    return False


def _wait_for_writers(path: Path) -> None:
    """Return once no process has ``path`` open for writing (or after a short bound).

    A program appending to (or rewriting) the settings in place may have opened the
    file just before delegate swapped it aside; its write lands there, after
    delegate looked. A read lease can be taken only while nobody has the file open
    for writing (fcntl(2)), so taking and dropping one at once tells. Where leases
    are not available (another owner, a file system without them) this is skipped.
    A process that sets a SIGURG handler of its own would see it called when the
    file is opened in the microseconds the lease is held.
    """
    set_signal = getattr(fcntl, "F_SETSIG", None)
    if set_signal is None:  # pragma: no cover - not Linux
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return
    try:
        # Someone opening the file while the lease is held is told to us by a signal:
        # SIGIO would end the process, SIGURG is ignored unless a handler is set.
        fcntl.fcntl(fd, set_signal, signal.SIGURG)
        until = time.monotonic() + WRITERS_WAIT_S
        while True:
            try:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            except OSError as exc:
                if exc.errno == errno.EAGAIN and time.monotonic() < until:
                    time.sleep(0.001)
                    continue
                return
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            return
    finally:
        os.close(fd)


def _write_temp(target: Path, text: str, mode: int) -> Path:
    """``text`` in a new file beside ``target`` (removed again if it cannot be written whole)."""
    try:
        with disk_full_as_error(target.parent):
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise HookSettingsUnusable(f"{target} cannot be written: {exc.strerror}") from None
    try:
        with (
            disk_full_as_error(target.parent),
            os.fdopen(fd, "w", encoding="utf-8", newline="") as f,
        ):
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise HookSettingsUnusable(f"{target} cannot be written: {exc.strerror}") from None
        raise
    return Path(tmp)


def _link_new(source: Path, target: Path) -> bool:
    """Give ``source``'s file the name ``target`` unless something has it (atomic)."""
    try:
        os.link(source, target)
    except FileExistsError:
        return False
    return True


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _renameat2 = getattr(_libc, "renameat2", None)
except OSError:  # pragma: no cover - no C library to ask
    _renameat2 = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically (False where the system or file system cannot)."""
    if _renameat2 is None:
        return False
    done = _renameat2(
        _AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), ctypes.c_uint(_RENAME_EXCHANGE)
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def unusable_result(path: Path, why: str) -> HookSettingsUnusable:
    return HookSettingsUnusable(
        f"delegate's change to {path} would leave a file the agent cannot read as meant"
        f" ({why}); it was left as it was. Please report this with the file's shape."
    )
