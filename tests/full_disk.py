"""A small file system that tests fill: a size-limited tmpfs, mounted for the test.

Mounting needs root (or the capability); without it :func:`small_disk` says why, and
the tests that need it skip with that reason. ``fill`` takes every byte but
``leave`` with a filler file; ``free`` removes it, so the tests can check that
everything works again once space is freed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FILLER = ".filler"


@dataclass
class SmallDisk:
    root: Path

    def available(self) -> int:
        info = os.statvfs(self.root)
        return info.f_bavail * info.f_frsize

    def fill(self, leave: int = 0) -> None:
        """Take every byte but about ``leave`` (rounded to the file system's pages)."""
        self.free()
        room = self.available() - leave
        with contextlib.suppress(OSError), open(self.root / FILLER, "wb") as f:
            while room > 0:
                room -= f.write(b"\0" * min(room, 65536))
                f.flush()

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / FILLER).unlink()


def cannot_mount() -> str | None:
    """Why this process may not mount a tmpfs, or None."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root (the full-disk tests run as root in CI)"
    return None


@contextlib.contextmanager
def small_disk(where: Path, size: str = "4m") -> Iterator[SmallDisk | str]:
    """A tmpfs of ``size`` at ``where``; or, when it cannot be mounted, the reason."""
    reason = cannot_mount()
    if reason is not None:
        yield reason
        return
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        yield f"cannot mount a tmpfs: {mounted.stderr.strip() or mounted.returncode}"
        return
    try:
        yield SmallDisk(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
