"""Which capsules ``capsule prune`` deletes: those past an age, and those a merge superseded.

Ages come from the file names (:mod:`core.capsules.storage`); what a merge
superseded, from git (:mod:`core.capsules.merged`). Only regular files are deleted.
"""

from __future__ import annotations

import contextlib
import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

from core.capsules.merged import superseded_capsules
from core.capsules.storage import created_from_name, list_capsules, name_order


def prune_capsules(
    repo: Path,
    *,
    older_than_days: int | None,
    merged: bool,
    now: datetime,
    main_line: str | None = None,
) -> list[Path]:
    """Delete capsules past retention; the paths deleted, oldest first.

    ``older_than_days``: capsules whose name is older than that many days.
    ``merged``: superseded capsules of merged branches — those written before the
    main line's newest commit, of a branch (not the main line, not the checked-out
    one) whose tip the main line contains (see :mod:`core.capsules.merged`).
    """
    doomed: set[Path] = set()
    if older_than_days is not None:
        before = now - timedelta(days=older_than_days)
        for path in list_capsules(repo):
            created = created_from_name(path)
            if created is not None and created < before:
                doomed.add(path)
    if merged:
        doomed.update(superseded_capsules(repo, list_capsules(repo), main_line=main_line))
    removed = []
    for path in sorted(doomed, key=name_order):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                removed.append(path)
    return removed
