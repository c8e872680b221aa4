"""Which capsules a merge superseded (``prune --merged``).

A capsule carries a branch's working state to the next agent. Once the branch's
work is on the main line, a capsule written before that is history: its branch
tip is contained in the main line, and it is older than the main line's newest
commit. Capsules of the main line itself and of the checked-out branch are never
superseded (a branch just cut from the main line, with no commit of its own yet,
is "contained" in it but is the work about to start), nor are those of a branch
git no longer knows (deleted locally and on every remote): nothing says where
its work went.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import git

from core.capsules.storage import branch_folder, branch_of, created_from_name
from core.gitinfo import current_branch

MAIN_LINES = ("main", "master", "trunk")


def _main_line(repository: git.Repo, named: str | None) -> git.Reference | None:
    heads = {head.name: head for head in repository.heads}
    if named is not None:
        return heads.get(named)
    return next((heads[name] for name in MAIN_LINES if name in heads), None)


def _branch_tips(repository: git.Repo) -> dict[str, git.Commit]:
    """Sanitised branch folder -> tip, local branches winning over remote-tracking ones."""
    tips: dict[str, git.Commit] = {}
    for remote in repository.remotes:
        for ref in remote.refs:
            name = ref.remote_head
            if name != "HEAD":
                tips[branch_folder(name).as_posix()] = ref.commit
    for head in repository.heads:
        tips[branch_folder(head.name).as_posix()] = head.commit
    return tips


def superseded_capsules(
    repo: Path, capsules: Iterable[Path], *, main_line: str | None = None
) -> list[Path]:
    """The capsules among ``capsules`` a merge into the main line superseded.

    The main line is ``main_line`` when named, else the first of main, master and
    trunk that exists; without one (or outside a git repository) nothing is.
    """
    try:
        repository = git.Repo(repo)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return []
    with repository:
        line = _main_line(repository, main_line)
        if line is None:
            return []
        line_tip = line.commit
        line_time = datetime.fromtimestamp(line_tip.committed_date, UTC)
        kept = {branch_folder(line.name).as_posix()}
        checked_out = current_branch(repo)
        if checked_out is not None:
            kept.add(branch_folder(checked_out).as_posix())
        tips = _branch_tips(repository)
        merged: dict[str, bool] = {}
        superseded = []
        for path in capsules:
            branch = branch_of(repo, path)
            created = created_from_name(path)
            if branch in kept or branch not in tips or created is None or created >= line_time:
                continue
            if branch not in merged:
                merged[branch] = repository.is_ancestor(tips[branch], line_tip)
            if merged[branch]:
                superseded.append(path)
        return superseded
