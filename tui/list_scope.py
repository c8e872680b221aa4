"""What the list covers, as the panel's toggles set it, and how the header says it.

The panel starts in a folder: inside a git repository the list covers that
project (its main worktree and every linked one) unless ``--all`` or the
``scope = "all"`` setting asks for every project. The toggles flip one thing
each (project ↔ all, current branch only, the archive, activity ↔ created
order); :meth:`ListScope.session_scope` turns the result into the core's
:class:`~core.models.SessionScope`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from rich.text import Text

from core.config import Settings
from core.gitinfo import current_branch, project_roots
from core.models import Session, SessionScope, SessionSort


@dataclass(frozen=True)
class ListScope:
    """The list's scope: where the panel started, and the toggles' positions."""

    # The project the panel started in (None outside a git repository) and its branch.
    roots: tuple[str, ...] | None = None
    branch: str | None = None
    all_projects: bool = True
    this_branch: bool = False
    archived: bool = False
    sort: SessionSort = SessionSort.ACTIVITY
    subagents: bool = True  # sub-agents folded under their parents; False hides them
    warmup: bool = False  # Claude Code's warm-up sub-agents shown too

    @classmethod
    def starting_in(
        cls, cwd: Path | None, settings: Settings, *, all_projects: bool = False
    ) -> ListScope:
        """The scope a panel started in ``cwd`` opens with (None: every project)."""
        roots = project_roots(cwd) if cwd is not None else None
        return cls(
            roots=roots,
            branch=current_branch(cwd) if roots and cwd is not None else None,
            all_projects=all_projects or settings.scope == "all" or roots is None,
            subagents=settings.subagents,
            warmup=settings.warmup_subagents,
        )

    @property
    def project_name(self) -> str | None:
        return Path(self.roots[0]).name if self.roots else None

    def session_scope(self) -> SessionScope:
        """The core's scope for listing, counting and searching what is shown."""
        scoped = not self.all_projects and self.roots is not None
        return SessionScope(
            roots=self.roots if scoped else None,
            branch=self.branch if self.this_branch and self.branch else None,
            archived=self.archived,
            sort=self.sort,
            top_level=True,
            subagents=self.subagents,
            warmup=self.warmup,
        )

    def covers(self, session: Session) -> bool:
        """Whether the list would show ``session`` as a row of its own (a live arrival)."""
        scope = self.session_scope()
        if session.parent_id is not None:
            return False  # read with its parent
        if (session.archived_at is not None) != scope.archived:
            return False
        if scope.branch is not None and session.git_branch != scope.branch:
            return False
        if scope.roots is not None:
            return any(
                session.cwd == root or session.cwd.startswith(root.rstrip(os.sep) + os.sep)
                for root in scope.roots
            )
        return True

    # --- the toggles -------------------------------------------------------

    def toggled_projects(self) -> ListScope:
        return replace(self, all_projects=not self.all_projects)

    def toggled_branch(self) -> ListScope:
        return replace(self, this_branch=not self.this_branch)

    def toggled_archive(self) -> ListScope:
        return replace(self, archived=not self.archived)

    def toggled_sort(self) -> ListScope:
        other = SessionSort.CREATED if self.sort is SessionSort.ACTIVITY else SessionSort.ACTIVITY
        return replace(self, sort=other)

    # --- the header ----------------------------------------------------------

    def describe(self) -> Text:
        """``payments-api (2 worktrees) · branch main · archive · by last activity``."""
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.archived:
            text.append("archive", "bold dark_orange")
            text.append(" · ", "dim")
        if self.all_projects or self.roots is None:
            text.append("all projects", "bold")
        else:
            text.append(self.project_name or "this project", "bold")
            worktrees = len(self.roots) - 1
            if worktrees:
                text.append(f" (+{worktrees} worktree{'' if worktrees == 1 else 's'})", "dim")
        if self.this_branch and self.branch:
            text.append(" · ", "dim")
            text.append(f"branch {self.branch}", "bold")
        text.append(" · ", "dim")
        order = "last activity" if self.sort is SessionSort.ACTIVITY else "created"
        text.append(f"by {order}", "dim")
        return text
