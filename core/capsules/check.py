"""Every check of a capsule in one call: structure and budget, secrets, drift.

What ``delegate capsule check`` prints, what the editor lists as you type and what a
launch refuses on. Each check stays in its own module; this one only runs them and
places drift problems on the line of the reference they concern.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.capsules.drift import Drift, check_drift
from core.capsules.markdown import CapsuleSyntaxError, parse_capsule
from core.capsules.model import DEFAULT_PROMPT_CEILING
from core.capsules.secrets import secret_problems
from core.capsules.validate import validate_capsule
from core.documents.problems import Problem
from core.gitinfo import worktree_root

_WHERE = {
    "changed_on_branch": "was changed by a commit on the branch",
    "changed_in_worktree": "has uncommitted changes",
}


def check_capsule(
    path: Path,
    text: str,
    *,
    repo: Path | None = None,
    prompt_ceiling: int = DEFAULT_PROMPT_CEILING,
) -> list[Problem]:
    """Every problem of the capsule ``text`` (read from, or to be saved at, ``path``),
    sorted by line: validation, secrets, then drift of its references.

    Drift is checked against ``repo``, or when it is None the repository holding
    ``path`` (none: no drift check). Blocking (reads files and git): run it in a thread
    from async code.
    """
    problems = validate_capsule(text, prompt_ceiling=prompt_ceiling)
    problems.extend(secret_problems(text))
    problems.extend(_drift_problems(path, text, repo))
    return sorted(problems, key=lambda problem: problem.line)  # stable: checks keep order


def _drift_problems(path: Path, text: str, repo: Path | None) -> list[Problem]:
    try:
        capsule = parse_capsule(text)
    except CapsuleSyntaxError:
        return []  # no usable front matter: validation already says so
    # A reference whose path could leave the repository is not kept by the parse
    # (validation reports it): drift only ever reads paths inside it.
    references = capsule.front.references
    if not references:
        return []
    root = repo if repo is not None else worktree_root(path.parent)
    if root is None:
        return []
    return [
        problem
        for drift in check_drift(root, references)
        if (problem := _problem(drift, _reference_line(text, drift.path))) is not None
    ]


def _problem(drift: Drift, line: int) -> Problem | None:
    if drift.state == "missing":
        return Problem(
            line=line,
            code="reference_missing",
            message=(
                f"reference {drift.path} no longer exists (or is not a regular file); "
                "drop it, or point it at where the code moved"
            ),
        )
    if drift.stale:
        return Problem(
            line=line,
            code="reference_stale",
            message=(
                f"reference {drift.path} {_WHERE[drift.state]} since the capsule was written; "
                "check what the capsule says about it, then record its new blob id"
            ),
        )
    return None


def _reference_line(text: str, path: str) -> int:
    """The line of the front matter naming ``path`` (1: the front matter, if not found)."""
    # The path as a whole (``src/a.py`` is not found inside ``src/a.py.bak``).
    wanted = re.compile(r"(?<![\w./-])" + re.escape(path) + r"(?![\w./-])")
    lines = text.split("\n")  # lines end at newlines only, as every check counts them
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            break  # the end of the front matter
        if wanted.search(line):
            return number
    return 1
