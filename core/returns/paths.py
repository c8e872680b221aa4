"""Where a group's hand-off files and artifacts live, and the ids that name them.

Seed 002's layout, under the repository the role works in::

    <repo>/.delegate/artifacts/<session>/<group>/handoffs/handoff_<role>.json
    <repo>/.delegate/artifacts/<session>/{reasoning,tests,reviews,investigations}/

Session, group and role ids are data from a tool call or a command line: each is
checked (:func:`check_artifact_id`) to be one plain folder or file-name part, so
no id leaves the artifacts folder, and two ids that differ name two folders.
"""

from __future__ import annotations

import re
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from core.documents.safe_files import DELEGATE_DIR, ensure_folders
from core.errors import ArtifactIdUnsafe
from core.gitinfo import worktree_root
from core.returns.model import AgentRole

ARTIFACTS_DIR: Final = "artifacts"
HANDOFFS_DIR: Final = "handoffs"
SHARED_DIRS: Final = ("reasoning", "tests", "reviews", "investigations")
"""The session's folders every group writes into (the file names carry the group)."""
MAX_ID_CHARS: Final = 64
SESSION_PREFIX: Final = "crp-"
_ISSUED_KEPT: Final = 4096  # ids remembered to never repeat one (the newest)
_ISSUED: dict[str, None] = {}
_ISSUED_LOCK = threading.Lock()

# ASCII letters, digits, '.', '_', '-'; starting with a letter or digit and not ending
# with a dot: no separator, no '..', no hidden name, no option-like leading dash, and no
# Unicode look-alike that one file system would fold into another id's folder.
_ID: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?")
# Names Windows reserves for devices, with or without an extension.
_DEVICE: Final = re.compile(r"(?i)(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\..*)?")


def check_artifact_id(value: str, what: str) -> str:
    """``value`` when it can name a folder of its own; else :class:`ArtifactIdUnsafe`.

    ``what`` names the id in the message (``group id``, ``artifacts session``...).
    """
    if not isinstance(value, str) or not value:
        raise ArtifactIdUnsafe(f"the {what} is empty; give a short name such as AUTH or group-1")
    if len(value) > MAX_ID_CHARS:
        raise ArtifactIdUnsafe(
            f"the {what} is {len(value):,} characters long; at most {MAX_ID_CHARS} are allowed"
        )
    if _ID.fullmatch(value) is None:
        raise ArtifactIdUnsafe(
            f"the {what} {value!r} cannot name a folder: use ASCII letters, digits, '.', '_'"
            " and '-', starting with a letter or digit and not ending with '.'"
            " (no '/', '\\', '..', spaces or control characters)"
        )
    if _DEVICE.fullmatch(value):
        raise ArtifactIdUnsafe(f"the {what} {value!r} is a device name on Windows; pick another")
    return value


def new_artifacts_session(now: datetime) -> str:
    """A fresh artifacts session id: ``crp-<yyyymmdd>-<hhmmss>-<8 hex>`` (UTC).

    The random tail keeps ids of one second apart across processes; within this
    process an id is never handed out twice.
    """
    stamp = now.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    with _ISSUED_LOCK:
        while True:
            session = f"{SESSION_PREFIX}{stamp}-{secrets.token_hex(4)}"
            if session not in _ISSUED:
                break
        _ISSUED[session] = None
        if len(_ISSUED) > _ISSUED_KEPT:
            del _ISSUED[next(iter(_ISSUED))]
    return session


@dataclass(frozen=True, slots=True)
class GroupPaths:
    """The folders and files of one group of an artifacts session (ids checked)."""

    repo: Path
    session: str
    group: str

    def __post_init__(self) -> None:
        check_artifact_id(self.session, "artifacts session")
        check_artifact_id(self.group, "group id")

    @property
    def artifacts_dir(self) -> Path:
        return self.repo / DELEGATE_DIR / ARTIFACTS_DIR

    @property
    def session_dir(self) -> Path:
        return self.artifacts_dir / self.session

    @property
    def group_dir(self) -> Path:
        return self.session_dir / self.group

    @property
    def handoffs_dir(self) -> Path:
        return self.group_dir / HANDOFFS_DIR

    def handoff_file(self, role: AgentRole | str) -> Path:
        """``handoffs/handoff_<role>.json`` (the role's value, e.g. ``qa_expert``)."""
        name = role.value if isinstance(role, AgentRole) else check_artifact_id(role, "role")
        return self.handoffs_dir / f"handoff_{name}.json"

    @property
    def reasoning_dir(self) -> Path:
        return self.session_dir / "reasoning"

    @property
    def tests_dir(self) -> Path:
        return self.session_dir / "tests"

    @property
    def reviews_dir(self) -> Path:
        return self.session_dir / "reviews"

    @property
    def investigations_dir(self) -> Path:
        return self.session_dir / "investigations"

    def relative(self, path: Path) -> str:
        """``path`` relative to the repository, with ``/`` (what a prompt names)."""
        try:
            return path.relative_to(self.repo).as_posix()
        except ValueError:
            return path.as_posix()


def repo_of(cwd: Path) -> Path:
    """The worktree root holding ``cwd`` (where artifacts go), else ``cwd`` itself."""
    root = worktree_root(cwd)
    return root if root is not None else cwd.absolute()


def group_paths(cwd: Path, session: str, group: str) -> GroupPaths:
    """The paths of ``group`` in ``session`` for a role working in ``cwd`` (ids checked)."""
    return GroupPaths(repo_of(cwd), session, group)


def ensure(paths: GroupPaths) -> GroupPaths:
    """Create the group's folders and the session's shared ones (0755), each a real folder.

    Raises :class:`~core.errors.DocumentInvalid` when something on the way is a
    symbolic link or not a folder: nothing is written through it.
    """
    what = "artifacts"
    ensure_folders(paths.repo, ARTIFACTS_DIR, paths.session, paths.group, HANDOFFS_DIR, what=what)
    for shared in SHARED_DIRS:
        ensure_folders(paths.repo, ARTIFACTS_DIR, paths.session, shared, what=what)
    return paths
