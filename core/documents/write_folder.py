"""Where delegate may write documents for a session (and run git): the one decision.

A session's ``cwd`` comes from its transcript, a file on disk that may have been
synced from another machine, so it never decides alone where delegate writes. The
session's folder is used when delegate has reason to trust it:

- delegate launched the session (a person named its folder when launching it);
- the folder is inside one the person named (``trusted_folders`` in the settings);
- for a session delegate imported, the folder is a repository the person works in:
  it exists, it is a git work tree git itself accepts (``safe.directory``: owned by
  this user), its top folder and ``.git`` are owned by this user, and it is not a
  system folder (``/``, ``/etc``, ``/usr``, ``/proc``, the ``/tmp`` root, …) nor the
  home folder or the folder above it. Symbolic links are followed first, so each
  check is of the folder really written to.

Otherwise the documents go under delegate's own data folder
(``<data folder>/elsewhere/<name>-<digest>/.delegate/``), the outcome says why, and
no git runs in the session's folder at all.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.gitinfo import worktree_root

ELSEWHERE_DIR = "elsewhere"
LAUNCHED_SOURCE = "delegate"  # the source of sessions delegate itself launched

SYSTEM_FOLDERS = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var/lib",
    "/var/log",
    "/var/run",
    "/var/spool",
    "/var/cache",
    "/System",
    "/Library",
    "/private/etc",
)
"""Folders (and everything under them) that are the system's, never a person's work."""

BARE_FOLDERS = ("/", "/tmp", "/var", "/var/tmp", "/private", "/private/tmp", "/home", "/Users")
"""Folders used as is only: a repository right there is no one's project (one under
them is, e.g. ``/tmp/x`` or ``/home/me/project``)."""


@dataclass(frozen=True, slots=True)
class WriteFolder:
    """Where a session's documents go.

    ``root``: the folder whose ``.delegate/`` holds them; ``repository``: the session's
    git work tree when delegate may run git there (None: no git at all);
    ``elsewhere``: why the session's own folder was not used (None when it was).
    """

    root: Path
    repository: Path | None
    elsewhere: str | None = None

    @property
    def trusted(self) -> bool:
        return self.elsewhere is None

    def ready(self) -> Path:
        """:attr:`root`, created first when it is under the data folder (private to
        this user); blocking."""
        if self.elsewhere is not None:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self.root


def _resolved(folder: Path) -> Path | None:
    try:
        return folder.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None


def _owned(path: Path) -> bool:
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except (OSError, ValueError):
        return False


def _under(path: Path, folders: Sequence[str | Path]) -> bool:
    return any(path == Path(f) or Path(f) in path.parents for f in folders)


def _home_folders() -> tuple[Path, ...]:
    try:
        home = _resolved(Path.home())
    except (KeyError, RuntimeError):  # no home folder known
        return ()
    return (home, home.parent) if home is not None else ()


def _system(folder: Path) -> bool:
    return _under(folder, SYSTEM_FOLDERS) or folder in {Path(p) for p in BARE_FOLDERS}


def refusal(cwd: str | Path) -> tuple[Path | None, str | None]:
    """The repository a session's ``cwd`` is in when it is one the person works in, else
    None and why not (a few words: "a system folder")."""
    raw = Path(cwd)
    if not raw.is_absolute():
        return None, "not an absolute path"
    folder = _resolved(raw)
    if folder is None or not folder.is_dir():
        return None, "not an existing folder"
    if _system(folder):
        return None, "a system folder"
    root = worktree_root(folder)
    if root is None:
        return None, "not in a git repository"
    root = _resolved(root) or root
    if _system(root):
        return None, f"in a system folder's repository ({root})"
    if root in _home_folders():
        return None, f"in a repository at the top of a home folder ({root})"
    if not _owned(root) or not _owned(root / ".git"):
        return None, f"in a repository another user owns ({root})"
    from core.documents.handoff_facts import checked_work_tree  # runs git, safely

    if checked_work_tree(root) is None:
        return None, f"in a folder git does not accept as your work tree ({root})"
    return root, None


def elsewhere_root(data_dir: Path, cwd: str | Path) -> Path:
    """The folder under delegate's data folder standing in for ``cwd``: its last name
    (letters, digits, ``-``, ``_``, ``.`` only) and a digest of the whole path."""
    text = str(cwd)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(text).name).strip(".-")[:40] or "folder"
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return data_dir / ELSEWHERE_DIR / f"{name}-{digest}"


def write_folder(
    cwd: str | Path,
    *,
    source: str,
    data_dir: Path,
    trusted_folders: Sequence[str | Path] = (),
) -> WriteFolder:
    """Where the documents of a session (its ``cwd`` and ``source``) go; blocking (reads
    the disk, may run git): call it in a thread from async code."""
    folder = Path(cwd)
    named = [p for p in (_resolved(Path(t).expanduser()) for t in trusted_folders) if p]
    real = _resolved(folder) if folder.is_absolute() else None
    if real is not None and real.is_dir() and (source == LAUNCHED_SOURCE or _under(real, named)):
        root = worktree_root(real)
        return WriteFolder(root=root or real, repository=root)
    repository, reason = refusal(folder)
    if repository is not None:
        return WriteFolder(root=repository, repository=repository)
    return WriteFolder(
        root=elsewhere_root(data_dir, cwd),
        repository=None,
        elsewhere=f"{cwd} is not a repository you work in ({reason})",
    )
