"""Helpers of the list's tests: real git repositories and sessions placed in them."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from tui_support import FIXED_NOW_US, session_with

from core.store import FinishedSession


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def scoped_session(
    cid: str,
    title: str,
    cwd: Path | str,
    *,
    minutes_ago: int,
    branch: str = "main",
    created_minutes_ago: int | None = None,
    parent_id: str | None = None,
) -> FinishedSession:
    made = session_with(cid, [title, "ok"], title=title, minutes_ago=minutes_ago, cwd=str(cwd))
    session = dataclasses.replace(made.session, git_branch=branch, parent_id=parent_id)
    if created_minutes_ago is not None:
        session = dataclasses.replace(
            session, created_us=FIXED_NOW_US - created_minutes_ago * 60_000_000
        )
    return dataclasses.replace(made, session=session)
