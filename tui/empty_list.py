"""What the list says when it has no row: how to start when the store holds no session
anywhere, else where the sessions are and the key that lists them.

A panel started inside a project with no sessions yet must not look like a store with
none: it says how many sessions the rest of the store holds (counted as the widened
list would show them: top-level rows) and which toggle shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rich.text import Text

from tui.list_scope import ListScope

STORE_EMPTY = """[b]No delegate sessions yet.[/b]

  • [b]ctrl+n[/b] starts a new session right here.
  • [b]delegate demo --sessions 50[/b] fills the store with sample sessions to explore.
  • [b]delegate run "PROMPT"[/b] launches one from the shell.
  • Claude Code and Codex sessions on disk are imported at start; [b]f5[/b] looks again.
  • [b]delegate import --report[/b] lists the files an import skipped.

Press [b]f1[/b] for every key."""


def widest(scope: ListScope) -> ListScope:
    """The reusable sessions of every project and branch: where the others are counted."""
    return replace(scope, all_projects=True, this_branch=False, archived=False)


def _sessions(count: int) -> str:
    return f"{count:,} session{'' if count == 1 else 's'}"


def empty_list_text(scope: ListScope, elsewhere: int, key: Callable[[str], str]) -> Text:
    """What the empty list (no search) says. ``elsewhere``: the top-level reusable
    sessions of every project and branch; ``key(binding_id)``: how its key reads."""
    by_project = not scope.all_projects and scope.roots is not None
    by_branch = scope.this_branch and scope.branch is not None
    if elsewhere == 0 and not scope.archived:
        return Text.from_markup(STORE_EMPTY)
    where = []
    if scope.archived:
        where.append("in the archive")
    if by_project:
        where.append(f"in {scope.project_name or 'this project'}")
    if by_branch:
        where.append(f"on branch {scope.branch}")
    text = Text()
    text.append(f"No sessions {' '.join(where) or 'here'}.", "bold")
    if elsewhere:
        text.append("\n\n")
        count = _sessions(elsewhere)
        if scope.archived:
            text.append(f"{count} not archived: ")
            text.append(key("picker.archived"), "bold")
            text.append(" shows them.")
        elif by_project and by_branch:
            text.append(f"{count} on other branches or in other projects: ")
            text.append(key("picker.branch"), "bold")
            text.append(" shows every branch, ")
            text.append(key("picker.scope"), "bold")
            text.append(" every project.")
        elif by_project:
            text.append(f"{count} in other projects: ")
            text.append(key("picker.scope"), "bold")
            text.append(" shows them.")
        elif by_branch:
            text.append(f"{count} on other branches: ")
            text.append(key("picker.branch"), "bold")
            text.append(" shows them.")
    if not scope.archived:
        text.append("\n\n")
        text.append(key("picker.new"), "bold")
        text.append(" starts a new session here.")
    return text
