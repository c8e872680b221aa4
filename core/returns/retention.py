"""Cleaning an artifacts session: its folders, its ``return`` documents and its steps.

A session's folder is ``<repo>/.delegate/artifacts/<session>``; the repositories are
the one named and every one the session's steps recorded a hand-off path in (a
batch may run groups in several). Removal goes through folder handles that refuse
symbolic links: a link at ``.delegate`` or ``artifacts`` stops it there, a link in
place of the session folder is removed as a name, and a link inside the folder is
unlinked, its target left alone. Nothing outside the session's folder is touched.

:func:`prune_ended` is retention: sessions whose every group's chain ended (the last
step routes nowhere on) more than ``keep_days`` ago are cleaned; a session with a
group still routing on to a next role is left alone however old.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from core.clock import to_us
from core.documents.safe_files import DELEGATE_DIR
from core.errors import ArtifactIdUnsafe
from core.returns.paths import ARTIFACTS_DIR, HANDOFFS_DIR, check_artifact_id
from core.store import Store

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FDS = (
    bool(_NO_FOLLOW and _DIRECTORY)
    and {os.open, os.stat, os.unlink} <= os.supports_dir_fd
    and shutil.rmtree.avoids_symlink_attacks
)


log = logging.getLogger(__name__)

PRUNE_BATCH = 200
"""Sessions cleaned per round at most (the next round takes the rest)."""


@dataclass(frozen=True, slots=True)
class CleanReport:
    """What cleaning one artifacts session removed, and what it refused to touch."""

    session: str
    folders: tuple[Path, ...]  # session folders removed (or links in their place)
    steps: int  # return_steps rows removed
    documents: int  # ``return`` document rows removed
    problems: tuple[str, ...] = ()  # places left alone, and why

    @property
    def removed_anything(self) -> bool:
        return bool(self.folders or self.steps or self.documents)


def session_repos(session: str, handoff_paths: list[str]) -> list[Path]:
    """The repositories whose artifacts folder holds ``session``, from recorded hand-off
    paths of the shape ``<repo>/.delegate/artifacts/<session>/<group>/handoffs/<file>``
    (any other shape is ignored: a stored path is data)."""
    repos: list[Path] = []
    for text in handoff_paths:
        path = Path(text)
        if not path.is_absolute() or len(path.parents) < 6:
            continue
        handoffs, group, named, artifacts, delegate = path.parents[0:5]
        if (handoffs.name, named.name, artifacts.name, delegate.name) != (
            HANDOFFS_DIR,
            session,
            ARTIFACTS_DIR,
            DELEGATE_DIR,
        ):
            continue
        try:
            check_artifact_id(group.name, "group id")
        except ArtifactIdUnsafe:
            continue
        if path.parents[5] not in repos:
            repos.append(path.parents[5])
    return repos


class NotAFolder(Exception):
    """A level above the session folder (its path in ``args[0]``) is a link or not a folder."""


def _open_artifacts(repo: Path) -> int | None:
    """A handle on ``repo/.delegate/artifacts``, each level opened without following a
    link; None when a level is absent."""
    try:
        fd = os.open(repo, os.O_RDONLY | os.O_CLOEXEC | _DIRECTORY)
    except FileNotFoundError:
        return None
    here = repo
    for part in (DELEGATE_DIR, ARTIFACTS_DIR):
        here = here / part
        try:
            inner = os.open(part, os.O_RDONLY | os.O_CLOEXEC | _DIRECTORY | _NO_FOLLOW, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError:
            raise NotAFolder(here) from None
        finally:
            os.close(fd)
        fd = inner
    return fd


def _remove_with_handles(repo: Path, session: str) -> bool:
    folder = _open_artifacts(repo)
    if folder is None:
        return False
    try:
        try:
            mode = os.stat(session, dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(mode):
            shutil.rmtree(session, dir_fd=folder)
        else:  # a link (or anything else) in the folder's place: the name goes, not its target
            os.unlink(session, dir_fd=folder)
        return True
    finally:
        os.close(folder)


def _remove_by_path(repo: Path, session: str) -> bool:
    # No folder handles on this platform: check each level just before removing.
    for level in (repo / DELEGATE_DIR, repo / DELEGATE_DIR / ARTIFACTS_DIR):
        try:
            mode = os.lstat(level).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(mode):
            raise NotAFolder(level)
    target = repo / DELEGATE_DIR / ARTIFACTS_DIR / session
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        shutil.rmtree(target)
    else:
        os.unlink(target)
    return True


def remove_session_folder(repo: Path, session: str) -> bool:
    """Remove ``repo/.delegate/artifacts/<session>`` without following a link; True when
    something was there. Raises :class:`NotAFolder` (nothing removed) when ``.delegate``
    or ``artifacts`` is a link or not a folder, ``OSError`` when the disk refuses."""
    check_artifact_id(session, "artifacts session")
    if _DIR_FDS:
        return _remove_with_handles(repo, session)
    return _remove_by_path(repo, session)


async def clean_session(store: Store, repo: Path, session: str) -> CleanReport:
    """Remove the artifacts session's folders (in ``repo`` and wherever its steps wrote),
    then its ``return`` documents and step rows. A folder that cannot be removed is
    named in ``problems``; the rows go all the same only when no folder was refused,
    so a later clean can still find the folder from them."""
    check_artifact_id(session, "artifacts session")
    repos = [repo.absolute()]
    for found in session_repos(session, await store.returns.handoff_paths(session)):
        if found not in repos:
            repos.append(found)
    removed: list[Path] = []
    problems: list[str] = []
    for each in repos:
        folder = each / DELEGATE_DIR / ARTIFACTS_DIR / session
        try:
            if await asyncio.to_thread(remove_session_folder, each, session):
                removed.append(folder)
        except NotAFolder as exc:
            problems.append(
                f"{exc.args[0]} is a symbolic link or not a folder; {folder} was left alone"
            )
        except OSError as exc:
            problems.append(f"{folder} could not be removed: {exc.strerror or exc}")
    if problems:
        return CleanReport(session, tuple(removed), 0, 0, tuple(problems))
    deleted = await store.returns.delete_session(
        session, [str(each / DELEGATE_DIR / ARTIFACTS_DIR / session) for each in repos]
    )
    return CleanReport(session, tuple(removed), deleted.steps, deleted.documents)


async def prune_ended(store: Store, now: datetime, keep_days: int) -> list[str]:
    """Clean every artifacts session whose chains all ended more than ``keep_days`` ago;
    the sessions cleaned. Sessions with a group still routing on are left alone."""
    before = to_us(now - timedelta(days=keep_days))
    cleaned = []
    for summary in await store.returns.sessions(PRUNE_BATCH, ended_before_us=before):
        session = summary.artifacts_session
        try:
            check_artifact_id(session, "artifacts session")
        except ArtifactIdUnsafe:
            # A row no delegate wrote: only its rows go, no folder is looked for.
            await store.returns.delete_session(session)
            continue
        repos = session_repos(session, await store.returns.handoff_paths(session))
        if not repos:
            await store.returns.delete_session(session)
            cleaned.append(session)
            continue
        report = await clean_session(store, repos[0], session)
        if report.problems:
            log.warning("artifacts session %s not cleaned: %s", session, "; ".join(report.problems))
        else:
            cleaned.append(session)
    return cleaned
