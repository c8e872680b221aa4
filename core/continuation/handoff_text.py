"""What a continuing session is told, and what delegate adds to an agent's own hand-off.

The words of a continuation's first prompt (a session delegate starts, a CLI a
person opens), the repository a hand-off file belongs to, and the facts delegate
knows better than the agent (git's word on the files, sub-agents still at work)
merged into the agent's sections. Shared by :mod:`core.continuation` and the hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.documents.handoff_facts import IN_FLIGHT, GitFacts, active_subagents, files_section
from core.documents.handoff_files import DELEGATE_DIR, HANDOFFS_DIR
from core.models import Session

if TYPE_CHECKING:
    from core.orchestrator import AgentOrchestrator

MAX_CHILD_PAGES = 20  # pages of sub-agents read for a hand-off (of MAX_PAGE each)


def continuation_prompt(path: Path, text: str = "") -> str:
    """The first prompt of a continuing session: what to do, then the hand-off ``text``.

    A launch delegate records passes the text apart (``delegate(document=...)``), so it
    is stored as context that a sub-agent of the new session inherits.
    """
    prompt = (
        "You continue the work of a previous session that handed off (its context"
        " window was filling up). Its hand-off document follows; it is also at"
        f" {path}. Read it completely, then continue the work from its Next Steps."
    )
    return f"{prompt}\n\n{text}" if text else prompt


def interactive_prompt(path: Path) -> str:
    """The first prompt of an agent CLI a person opens on a hand-off (it reads the file)."""
    return (
        f"Read the hand-off document at {path} completely, then continue the work"
        " from its Next Steps."
    )


def repository_of(document_path: Path) -> Path | None:
    """The repository a hand-off belongs to (``<repo>/.delegate/handoffs/...``), if it says."""
    for folder in document_path.parents:
        if folder.name == HANDOFFS_DIR and folder.parent.name == DELEGATE_DIR:
            return folder.parent.parent
    return None


async def subagents_at_work(orchestrator: AgentOrchestrator, conversation_id: str) -> list[Session]:
    """The session's sub-agents still at work (a run in flight or a detached launch not
    finished), oldest first, every page of them read."""
    found: list[Session] = []
    cursor: str | None = None
    for _page in range(MAX_CHILD_PAGES):
        page = await orchestrator.list_children(conversation_id, cursor=cursor)
        found += [child for child in page.sessions if child.state in IN_FLIGHT]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found


def with_subagents_at_work(written: str, children: Sequence[Session]) -> str:
    """An agent's Active Subagents section, with delegate's own list added when the agent
    left out a sub-agent still at work (an agent forgets a detached one; the store does not)."""
    missing = [child for child in children if child.conversation_id not in written]
    if not missing:
        return written
    if written.strip() in ("", "- None", "None", "- **None**"):
        return active_subagents(children)
    return f"{written}\n\nStill at work, as delegate knows:\n\n{active_subagents(missing)}"


def with_known_facts(
    written: dict[str, str], git: GitFacts | None, children: Sequence[Session]
) -> dict[str, str]:
    """An agent's own hand-off sections with what delegate knows added: git's word on the
    files (a checked git work tree only) and the sub-agents at work it left out."""
    files = written.get("Files Modified", "")
    if git is not None:
        files += "\n\nWhat git says:\n\n" + files_section(git)
    return {
        **written,
        "Files Modified": files,
        "Active Subagents": with_subagents_at_work(written.get("Active Subagents", ""), children),
    }
