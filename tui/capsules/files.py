"""What the capsule editor asks of the capsule core: a new capsule's text, the checks,
the repository's files, references, the inbox, and saving.

One module between the editor and ``core.capsules`` so the screen stays about keys
and widgets. Everything here blocks (files, git) except :func:`save`: the editor
calls it from worker threads.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from core.capsules import storage
from core.capsules.check import check_capsule
from core.capsules.drift import reference_for
from core.capsules.inbox import consume, entry_bullet, inbox_entries
from core.capsules.markdown import CapsuleSyntaxError, parse_capsule, render_capsule, with_front
from core.capsules.model import DEFAULT_BUDGET, FrontMatter, Reference
from core.capsules.registry import register_capsule
from core.capsules.storage import capsules_dir
from core.capsules.template import capsule_template
from core.capsules.validate import body_tokens
from core.config import Settings
from core.documents.safe_files import replace_file
from core.errors import DocumentInvalid
from core.events import CapsuleSaved
from core.gitinfo import current_branch
from core.models import Session
from core.orchestrator import AgentOrchestrator
from tui.capsules.report import CapsuleReport, outline_of

MAX_FILES = 5_000
"""Files the reference picker lists (a huge repository: type to narrow)."""
PREFILLED_REFERENCES = 10
"""Changed files a new capsule references from the start."""


def prompt_ceiling(settings: Settings) -> int:
    """The sub-agent prompt ceiling the budget check measures against."""
    return settings.capsule_max_tokens


def read_capsule(path: Path) -> str:
    """A capsule's text: a regular UTF-8 file of bounded size (nothing on disk trusted)."""
    return storage.read_capsule(path)


# --- a new capsule ---------------------------------------------------------------


def new_capsule_text(
    repo: Path, session: Session | None, now: datetime, source: str | None = None
) -> str:
    """The template, pre-filled from ``session`` when there is one: its id as the
    source session (``source``: a marker named instead), the branch, its title as the
    objective, and references to the files changed in the repository (with their blob
    ids)."""
    # The repository's branch now (where the capsule is stored and a launch looks for
    # it), else the one the session recorded.
    branch = current_branch(repo) or (session.git_branch if session else None) or "main"
    objective = " ".join((session.shown_title or "").split()) if session else ""
    references = tuple(
        reference_for(repo, name) for name in changed_files(repo)[:PREFILLED_REFERENCES]
    )
    front = FrontMatter(
        branch=branch,
        source_session=source or (session.conversation_id if session else "unknown"),
        created_at=now.replace(microsecond=0),  # whole seconds, as `capsule new` writes
        primary_objective=objective,
        references=references,
    )
    return capsule_template(front)


def changed_files(repo: Path) -> list[str]:
    """Files git sees changed in ``repo`` (the session's work so far), in git's order."""
    from core.safe_git import git_output

    lines = git_output(
        repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all"
    )
    if lines is None:
        return []
    names: list[str] = []
    entries = iter(lines.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, name = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            next(entries, None)  # the rename's source follows; the new name is the one
        if "D" not in code and not _delegates_own(name):
            names.append(name)
    return names


def _delegates_own(name: str) -> bool:
    """A file under ``.delegate/`` (capsules, hand-offs, the inbox): delegate's records,
    never the work a capsule refers a sub-agent to."""
    return name == ".delegate" or name.startswith(".delegate/")


def repository_files(repo: Path) -> list[str]:
    """The repository's files (tracked and untracked, ignored ones left out), sorted."""
    from core.safe_git import git_output

    listed = git_output(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None:
        return []
    names = {name for name in listed.split("\0") if name and not _delegates_own(name)}
    return sorted(names)[:MAX_FILES]


# --- references in the front matter -------------------------------------------


def with_reference(text: str, reference: Reference) -> tuple[str, int]:
    """``text`` with ``reference`` added to its front matter (rendered canonically; a
    path already referenced gets its blob id refreshed), and the 0-based row of it."""
    try:
        capsule = parse_capsule(text)
    except CapsuleSyntaxError:
        raise DocumentInvalid(
            "the capsule has no front matter to add a reference to; start it with the "
            "template's `---` block"
        ) from None
    kept = tuple(r for r in capsule.front.references if r.path != reference.path)
    front = capsule.front.model_copy(update={"references": (*kept, reference)})
    updated = render_capsule(with_front(capsule, front))
    lines = updated.splitlines()
    row = next((i for i, line in enumerate(lines) if line.strip().endswith(reference.path)), 0)
    return updated, row


# --- checks ----------------------------------------------------------------------


def check(repo: Path, path: Path | None, text: str, ceiling: int) -> CapsuleReport:
    """Every check of ``text`` (structure, budget, secrets, drift of its references),
    with the body's tokens against its budget and the outline."""
    where = path if path is not None else capsules_dir(repo) / "new.md"
    problems = check_capsule(where, text, repo=repo, prompt_ceiling=ceiling)
    try:
        capsule = parse_capsule(text)
        budget, tokens = capsule.front.token_budget, body_tokens(capsule)
    except CapsuleSyntaxError:
        budget, tokens = DEFAULT_BUDGET, body_tokens(text)
    return CapsuleReport(
        problems=tuple(problems),  # sorted by line
        tokens=tokens,
        budget=budget,
        ceiling=ceiling,
        outline=outline_of(text),
    )


# --- the inbox -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InboxChoice:
    """A remember-later entry as the picker shows it and the capsule takes it."""

    entry_id: str
    label: str
    detail: str
    bullet: str


def open_inbox_entries(repo: Path) -> list[InboxChoice]:
    """The inbox's entries not yet consumed."""
    return [
        InboxChoice(
            entry_id=entry.entry_id,
            label=f"{entry.topic}: {entry.reminder}" if entry.topic else entry.reminder,
            detail=f"{entry.created_at:%Y-%m-%d %H:%M}"
            + (f" · {', '.join(entry.tags)}" if entry.tags else ""),
            bullet=entry_bullet(entry),
        )
        for entry in inbox_entries(repo)
    ]


# --- saving ----------------------------------------------------------------------


def save_text(repo: Path, path: Path | None, text: str, now: datetime) -> Path:
    """Write ``text`` at ``path`` whole (a temporary file, then a rename), or, for a new
    capsule (None), as the newest capsule of its branch; its path."""
    if path is None:
        try:
            branch = parse_capsule(text).front.branch
        except CapsuleSyntaxError:
            branch = current_branch(repo) or "main"
        return storage.save_capsule(repo, text, branch=branch, created=now)
    return replace_file(path.parent, path.name, text)


async def save(
    orchestrator: AgentOrchestrator | None,
    repo: Path,
    path: Path | None,
    text: str,
    *,
    session: str | None,
    now: datetime,
    consumed: tuple[str, ...] = (),
) -> Path:
    """Save the capsule, mark the inbox entries pulled into it consumed, register it in
    the store and say so in the history (``CapsuleSaved``); its path."""
    saved = await asyncio.to_thread(save_text, repo, path, text, now)
    if consumed:
        await asyncio.to_thread(consume, repo, consumed, into=saved, now=now, insert=False)
    if orchestrator is not None:
        document = await register_capsule(
            orchestrator.store, saved, text, source_session=session, producer="person", created=now
        )
        await orchestrator.emit(
            CapsuleSaved(
                at=now,
                conversation_id=session or "",
                document_id=document.document_id,
                path=str(saved),
                producer="person",
            )
        )
    return saved
