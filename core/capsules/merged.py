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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.capsules.storage import branch_folder, branch_of, created_from_name
from core.gitinfo import current_branch
from core.safe_git import git_output, run_git

MAIN_LINES = ("main", "master", "trunk")


@dataclass(frozen=True, slots=True)
class _Tip:
    """A branch's name and its tip: the commit id and when it was committed."""

    name: str
    commit: str
    committed: datetime


def _refs(repo: Path, where: str) -> list[_Tip]:
    """The branches under ``refs/<where>/`` (``heads``, ``remotes``) and their tips."""
    listed = git_output(
        repo,
        "for-each-ref",
        "--format=%(refname:lstrip=2)%00%(objectname)%00%(committerdate:unix)%00",
        f"refs/{where}/",
    )
    tips = []
    for line in (listed or "").splitlines():
        fields = line.split("\0")
        if len(fields) < 3 or not fields[2].isdigit():
            continue  # a tag-like ref pointing at no commit
        tips.append(_Tip(fields[0], fields[1], datetime.fromtimestamp(int(fields[2]), UTC)))
    return tips


def _main_line(heads: list[_Tip], named: str | None) -> _Tip | None:
    by_name = {head.name: head for head in heads}
    if named is not None:
        return by_name.get(named)
    return next((by_name[name] for name in MAIN_LINES if name in by_name), None)


def _branch_tips(heads: list[_Tip], remotes: list[_Tip]) -> dict[str, str]:
    """Sanitised branch folder -> tip, local branches winning over remote-tracking ones."""
    tips: dict[str, str] = {}
    for ref in remotes:
        _remote, _, name = ref.name.partition("/")
        if name and name != "HEAD":
            tips[branch_folder(name).as_posix()] = ref.commit
    for head in heads:
        tips[branch_folder(head.name).as_posix()] = head.commit
    return tips


def _is_ancestor(repo: Path, commit: str, of: str) -> bool:
    done = run_git(repo, "merge-base", "--is-ancestor", commit, of)
    return done is not None and done.returncode == 0


def superseded_capsules(
    repo: Path, capsules: Iterable[Path], *, main_line: str | None = None
) -> list[Path]:
    """The capsules among ``capsules`` a merge into the main line superseded.

    The main line is ``main_line`` when named, else the first of main, master and
    trunk that exists; without one (or outside a git repository) nothing is.
    """
    if git_output(repo, "rev-parse", "--is-inside-work-tree") is None:
        return []
    heads = _refs(repo, "heads")
    line = _main_line(heads, main_line)
    if line is None:
        return []
    kept = {branch_folder(line.name).as_posix()}
    checked_out = current_branch(repo)
    if checked_out is not None:
        kept.add(branch_folder(checked_out).as_posix())
    tips = _branch_tips(heads, _refs(repo, "remotes"))
    merged: dict[str, bool] = {}
    superseded = []
    for path in capsules:
        branch = branch_of(repo, path)
        created = created_from_name(path)
        if branch in kept or branch not in tips or created is None or created >= line.committed:
            continue
        if branch not in merged:
            merged[branch] = _is_ancestor(repo, tips[branch], line.commit)
        if merged[branch]:
            superseded.append(path)
    return superseded
