"""The capsule prompt: the instruction block that asks an agent for its capsule.

The seed's ``make capsule_prompt``: the branch detected from the repository, the
path the capsule should go to, the plan and progress notes and the remember-later
inbox to read first, the budget, the template to fill and a self-checklist; the
agent answers with the capsule's Markdown only. ``stub`` also writes the empty
skeleton at that path for a person (or the agent, with file tools) to fill in.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.atomic_files import disk_full_as_error
from core.capsules.inbox import EXPLORATORY, MINI_TARGET, InboxEntry, inbox_entries, inbox_path
from core.capsules.model import (
    CEILING_SHARE,
    DEFAULT_BUDGET,
    DEFAULT_PROMPT_CEILING,
    MAX_HIGHLIGHTS,
    MINI_BUDGET,
    FrontMatter,
)
from core.capsules.storage import (
    DETACHED,
    branch_folder,
    capsule_path,
    save_capsule,
    write_new_file,
)
from core.capsules.template import capsule_template
from core.errors import CapsulePathUnsafe
from core.gitinfo import current_branch

UNKNOWN_SESSION = "unknown"
OBJECTIVE_HINT = "Fill in: the one goal this work serves"
PLAN_PLACES = ("docs/plans/{slug}.md", "docs/branches/{slug}.md", "plans/{slug}.md")
"""Where a branch's plan notebook is looked for (first found wins), ``slug`` its name."""
PROGRESS_PLACES = (
    "docs/progress/{slug}.md",
    "docs/branches/{slug}-progress.md",
    "progress/{slug}.md",
)
MAX_INBOX_LISTED = 20


@dataclass(frozen=True)
class CapsulePrompt:
    text: str
    path: Path  # where the capsule goes (the stub, when one was written)
    branch: str
    stub_written: bool = False


def plan_slug_for(branch: str) -> str:
    """A branch's notebook name: its folder with ``/`` as ``-`` (``feature/x`` -> ``feature-x``)."""
    return branch_folder(branch).as_posix().replace("/", "-")


def _found(repo: Path, places: tuple[str, ...], slug: str) -> tuple[str | None, list[str]]:
    """The first of ``places`` that is a regular file in ``repo``, and every place looked at."""
    looked = [place.format(slug=slug) for place in places]
    for relative in looked:
        try:
            if stat.S_ISREG(os.lstat(repo / relative).st_mode):
                return relative, looked
        except OSError:
            continue
    return None, looked


def _inside(repo: Path, file: Path) -> Path:
    """``file`` (relative to ``repo`` or absolute) as an absolute path inside the repository,
    reached through no symbolic link; it need not exist yet."""
    root = repo.resolve()
    lexical = Path(os.path.normpath(file if file.is_absolute() else root / file))
    if lexical.is_relative_to(repo.absolute()) and not lexical.is_relative_to(root):
        lexical = root / lexical.relative_to(repo.absolute())
    existing = lexical
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not lexical.is_relative_to(root) or existing.resolve() != existing:
        raise CapsulePathUnsafe(
            f"{file} is outside the repository {root} or goes through a symbolic link;"
            " capsules are written only inside it"
        )
    return lexical


def _write_stub(repo: Path, file: Path | None, skeleton: str, branch: str, now: datetime) -> Path:
    if file is None:
        return save_capsule(repo, skeleton, branch=branch, created=now)
    target = _inside(repo, file)
    with disk_full_as_error(target.parent):
        target.parent.mkdir(parents=True, exist_ok=True)
    return write_new_file(target, skeleton)


def _shown(repo: Path, path: Path) -> str:
    try:
        return path.relative_to(repo.resolve()).as_posix()
    except ValueError:
        try:
            return path.relative_to(repo.absolute()).as_posix()
        except ValueError:
            return str(path)


def _inbox_lines(repo: Path, entries: list[InboxEntry], section: str) -> list[str]:
    where = _shown(repo, inbox_path(repo))
    if not entries:
        return [f"- Remember-later inbox (`{where}`): nothing outstanding."]
    lines = [
        f"- Remember-later inbox (`{where}`), {len(entries)} outstanding: carry each into"
        f" {section}, or note it done in the plan or progress notes."
    ]
    for entry in entries[:MAX_INBOX_LISTED]:
        topic = f"**{entry.topic}**: " if entry.topic else ""
        step = f" — next step: {entry.next_step}" if entry.next_step else ""
        lines.append(f"  - [{entry.entry_id}] {topic}{entry.reminder}{step}")
    if len(entries) > MAX_INBOX_LISTED:
        lines.append(f"  - … and {len(entries) - MAX_INBOX_LISTED} more in the file")
    return lines


def _notebook_line(label: str, found: str | None, looked: list[str]) -> str:
    if found is not None:
        return f"- {label}: `{found}`"
    return f"- {label}: none found (looked for {', '.join(f'`{p}`' for p in looked)})"


def capsule_prompt(
    repo: Path,
    *,
    session: str | None,
    file: Path | None,
    stub: bool,
    plan_slug: str | None,
    budget: int | None,
    now: datetime,
    mini: bool = False,
    prompt_ceiling: int = DEFAULT_PROMPT_CEILING,
    branch: str | None = None,
) -> CapsulePrompt:
    """The prompt that asks an agent for its capsule, and where the capsule goes.

    ``branch`` defaults to the checked-out one (``HEAD`` when detached); ``file``
    overrides the suggested path (inside the repository, else ``capsule_path_unsafe``);
    ``stub`` writes the skeleton there first (never over a file); ``plan_slug`` names the
    plan and progress notebooks when they are not named after the branch.
    """
    branch = branch or current_branch(repo) or DETACHED
    created = now.astimezone(UTC).replace(microsecond=0)
    budget = budget or (MINI_BUDGET if mini else DEFAULT_BUDGET)
    front = FrontMatter(
        branch=branch,
        source_session=session or UNKNOWN_SESSION,
        created_at=created,
        primary_objective=OBJECTIVE_HINT,
        token_budget=budget,
        template="mini" if mini else "full",
    )
    skeleton = capsule_template(front)
    if stub:
        path = _write_stub(repo, file, skeleton, branch, created)
    elif file is not None:
        path = _inside(repo, file)
    else:
        path = capsule_path(repo, branch, created)
    slug = plan_slug or plan_slug_for(branch)
    plan = _found(repo, PLAN_PLACES, slug)
    progress = _found(repo, PROGRESS_PLACES, slug)
    text = _compose(
        repo=repo,
        front=front,
        path=path,
        stub=stub,
        plan=plan,
        progress=progress,
        inbox=inbox_entries(repo),
        skeleton=skeleton,
        prompt_ceiling=prompt_ceiling,
    )
    return CapsulePrompt(text=text, path=path, branch=branch, stub_written=stub)


def _compose(
    *,
    repo: Path,
    front: FrontMatter,
    path: Path,
    stub: bool,
    plan: tuple[str | None, list[str]],
    progress: tuple[str | None, list[str]],
    inbox: list[InboxEntry],
    skeleton: str,
    prompt_ceiling: int,
) -> str:
    session = (
        f"`{front.source_session}`"
        if front.source_session != UNKNOWN_SESSION
        else "unknown: leave `source_session: unknown`"
    )
    kind = "miniature (three sections)" if front.template == "mini" else "full (eight sections)"
    ceiling = int(prompt_ceiling * CEILING_SHARE)
    where = _shown(repo, path)
    stub_note = " (an empty skeleton is already there)" if stub else ""
    lines = [
        "# Write your context capsule",
        "",
        "Flush your current working memory into a context capsule: a short Markdown snapshot"
        " a sub-agent reads at launch so it continues this work as if it were you. Distil;"
        " do not replay the transcript.",
        "",
        f"- Branch: `{front.branch}`",
        f"- Source session: {session}",
        f"- Created at: {front.created_at.strftime('%Y-%m-%dT%H:%M:%SZ')}",
        f"- Capsule path: `{where}`{stub_note}",
        f"- Token budget: {front.token_budget:,} tokens for the body (never over"
        f" {ceiling:,}: 80% of the sub-agent's {prompt_ceiling:,}-token prompt ceiling)",
        f"- Template: {kind}, below",
        "",
        "## Read first",
        _notebook_line("Plan", *plan),
        _notebook_line("Progress notes", *progress),
        *_inbox_lines(repo, inbox, MINI_TARGET if front.template == "mini" else EXPLORATORY),
        "- `git status` and the latest commits of the branch.",
        "",
        "## How to write it",
        "- Newest, blocking and high-severity items first; stable background (architecture,"
        " coding standards) belongs in the project's docs: reference paths and plan entries"
        " instead of re-explaining them.",
        "- Summarise repetitive exchanges as one bullet; group related to-dos under one"
        " workstream.",
        f"- Transcript Highlights: at most {MAX_HIGHLIGHTS} pivotal exchanges, each citing a"
        " timestamp, a message id or a commit hash.",
        "- Exploratory threads: topic, current hypothesis, what is missing, and the next"
        " discovery step; user preferences and 'remember this' requests go there too.",
        "- List the files the capsule relies on under `references:` in the front matter"
        " (`- path: src/x.py`); their blob ids are filled in when it is checked.",
        "- No secrets: no API keys, tokens, passwords or private keys; write `[REDACTED]`.",
        "",
        "## Template",
        "",
        "```markdown",
        skeleton.rstrip("\n"),
        "```",
        "",
        "## Before you answer, check",
        "- [ ] The front matter is complete: branch, source_session, created_at,"
        " primary_objective (one sentence), token_budget, version.",
        "- [ ] Every section of the template is there, in its order.",
        "- [ ] It agrees with `git status` and the latest commits.",
        "- [ ] It agrees with the plan and progress notes; anything out of date or"
        " contradictory is flagged under Risks & Watchpoints.",
        "- [ ] Every outstanding inbox entry is carried over or noted done.",
        f"- [ ] The body fits {front.token_budget:,} tokens, with at most {MAX_HIGHLIGHTS}"
        " highlights, each with its reference.",
        "- [ ] No secret is in it.",
        "",
        "Answer with the completed capsule's Markdown only, from its front matter on: no"
        " prose before or after it.",
    ]
    return "\n".join(lines) + "\n"
