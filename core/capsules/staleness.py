"""Whether a registered capsule went stale: files it references changed since it was written.

The supervisor asks this of every capsule the registry holds (``CapsuleDrift``); the
capsule's repository is the worktree holding its file.
"""

from __future__ import annotations

from pathlib import Path

from core.capsules.drift import check_drift
from core.capsules.markdown import parse_capsule
from core.capsules.storage import read_capsule
from core.errors import DelegateError
from core.gitinfo import worktree_root


def changed_references(path: Path) -> tuple[str, ...] | None:
    """The references of the capsule at ``path`` that drifted (changed or missing), in
    its order; None when it cannot be judged (gone, unreadable, no front matter, not in
    a repository)."""
    try:
        text = read_capsule(path)
        capsule = parse_capsule(text)
    except DelegateError:
        return None
    repo = worktree_root(path.parent)
    if repo is None:
        return None
    try:
        drifts = check_drift(repo, capsule.front.references)
    except DelegateError:  # a reference that names a path outside the repository
        return None
    return tuple(d.path for d in drifts if d.stale)
