"""A hand-off built from facts: the store, the transcript's last messages and git.

Always available (no agent is asked), so it is what a hand-off falls back to
when the agent cannot write its own, and what a session a person runs gets.
Nothing is invented: a section delegate has no facts for says so, and the
agent's words are quoted as they were, marked as quotes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.documents.handoff_template import NOTHING_RECORDED
from core.gitinfo import current_branch, worktree_root
from core.models import Message, Role, Session, SessionState
from core.one_line import first_line_clipped
from core.safe_git import git_output

MAX_STATUS_LINES = 200  # a hand-off lists at most this many changed files
MAX_STAT_LINES = 60
QUOTE_CHARS = 800  # an agent reply is quoted up to this many characters
REPLIES_QUOTED = 3
PROMPTS_LISTED = 10
PROMPT_CHARS = 160  # a listed prompt is its first line, cut here


@dataclass(frozen=True, slots=True)
class GitFacts:
    """What git says about the session's repository (see :func:`git_facts`)."""

    root: Path
    branch: str | None
    status: tuple[str, ...]  # ``git status --porcelain`` lines
    diff_stat: tuple[str, ...]  # ``git diff --stat HEAD`` lines (the summary last)
    more_changes: int = 0  # changed files not listed (past MAX_STATUS_LINES)


def _git(root: Path, *args: str) -> str | None:
    """git's output in ``root`` (run as :mod:`core.safe_git` runs it), or None."""
    return git_output(root, *args)


def checked_work_tree(cwd: Path) -> Path | None:
    """The top of the git work tree holding ``cwd``, once git agrees it is one (its own
    ``.git`` found by reading files, then ``git rev-parse`` there, which also refuses a
    repository another user owns); None otherwise."""
    root = worktree_root(cwd)
    if root is None or not root.is_dir():
        return None
    top = _git(root, "rev-parse", "--is-inside-work-tree", "--show-toplevel")
    if top is None:
        return None
    lines = top.splitlines()
    if len(lines) != 2 or lines[0] != "true":
        return None
    try:
        same = Path(lines[1]).resolve() == root.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return root if same else None


def git_facts(cwd: Path) -> GitFacts | None:
    """The repository holding ``cwd``: branch, status, diff stat; None outside a checked
    git work tree.

    Blocking (runs git): call it in a thread. git runs read-only, with no hook, fsmonitor,
    pager or external diff of the repository's; a repository git cannot read gives None,
    never an exception.
    """
    root = checked_work_tree(cwd)
    if root is None:
        return None
    status = _git(root, "status", "--porcelain=v1", "--ignore-submodules=all")
    if status is None:
        return None
    lines = status.splitlines()
    stat_text = _git(
        root,
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        "--stat=100",
        "HEAD",
    )
    stat = stat_text.splitlines() if stat_text else []  # None: no commit yet
    if len(stat) > MAX_STAT_LINES:
        stat = [*stat[: MAX_STAT_LINES - 1], "…", stat[-1]]
    return GitFacts(
        root=root,
        branch=current_branch(root),
        status=tuple(lines[:MAX_STATUS_LINES]),
        diff_stat=tuple(stat),
        more_changes=max(0, len(lines) - MAX_STATUS_LINES),
    )


def files_section(found: GitFacts | None) -> str:
    """The Files Modified section from what git says."""
    if found is None:
        return f"{NOTHING_RECORDED} (the working folder is not in a git repository)"
    if not found.status:
        return f"No uncommitted changes on branch {found.branch or '(detached HEAD)'}."
    lines = [f"Branch: {found.branch or '(detached HEAD)'}", "", "```", *found.status]
    if found.more_changes:
        lines.append(f"… and {found.more_changes} more")
    lines.append("```")
    if found.diff_stat:
        lines += ["", "Against HEAD:", "", "```", *found.diff_stat, "```"]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class HandoffFacts:
    """Everything a hand-off from facts is built from."""

    session: Session
    messages: Sequence[Message]  # the transcript's last messages, oldest first
    running_children: Sequence[Session]
    git: GitFacts | None
    previous_path: str | None = None  # the hand-off this session was started from
    transcript: str | None = None  # the transcript file of an imported session


def _quote(text: str) -> str:
    cut = text.strip()
    if len(cut) > QUOTE_CHARS:
        cut = cut[: QUOTE_CHARS - 1] + "…"
    return "\n".join(f"> {line}" if line else ">" for line in cut.splitlines())


def _prompts(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role is Role.USER and m.content.strip()]


def _replies(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role is Role.ASSISTANT and m.content.strip()]


def _unanswered(messages: Sequence[Message]) -> Message | None:
    """The last prompt when no reply followed it."""
    spoken = [m for m in messages if m.role in (Role.USER, Role.ASSISTANT) and m.content.strip()]
    return spoken[-1] if spoken and spoken[-1].role is Role.USER else None


def _current_task(facts: HandoffFacts) -> str:
    session = facts.session
    lines = [f"{session.name or session.title or 'An untitled session'}"]
    prompts = _prompts(facts.messages)
    if prompts:
        lines += ["", "The last request in the session:", "", _quote(prompts[-1].content)]
    return "\n".join(lines)


def _progress(facts: HandoffFacts) -> str:
    open_prompt = _unanswered(facts.messages)
    answered = [m for m in _prompts(facts.messages) if m is not open_prompt]
    completed = [
        f"- Answered: {first_line_clipped(m.content, PROMPT_CHARS)}"
        for m in answered[-PROMPTS_LISTED:]
    ]
    in_progress = []
    if open_prompt is not None:
        in_progress.append(
            f"- Not answered yet: {first_line_clipped(open_prompt.content, PROMPT_CHARS)}"
        )
    if facts.running_children:
        in_progress.append(f"- {len(facts.running_children)} sub-agent(s) still running")
    if facts.git is not None and facts.git.status:
        count = len(facts.git.status) + facts.git.more_changes
        in_progress.append(f"- Uncommitted changes in {count} file(s) (see Files Modified)")
    parts: tuple[tuple[str, list[str]], ...] = (
        ("Completed", completed),
        ("In Progress", in_progress),
        ("Pending", []),  # what is still to do is the agent's knowledge, not a fact
    )
    return "\n\n".join(
        f"### {name}\n" + ("\n".join(items) if items else NOTHING_RECORDED) for name, items in parts
    )


IN_FLIGHT = frozenset({SessionState.RUNNING, SessionState.PENDING})
"""A sub-agent still at work: a run in flight, or a detached launch not finished."""


def active_subagents(children: Sequence[Session]) -> str:
    """The Active Subagents section for these sub-agents still at work ("- None": none)."""
    if not children:
        return "- None"
    return "\n".join(
        f"- **{child.name or child.title or child.agent_id}** (id: {child.conversation_id})\n"
        f"  - Status: {_state(child)}; agent: {child.agent_id}\n"
        f"  - Check it with: delegate sessions show {child.conversation_id}"
        for child in children
    )


def _state(child: Session) -> str:
    if child.state is SessionState.PENDING:
        return "pending (a detached run still working)"
    return child.state.value


def _subagents(facts: HandoffFacts) -> str:
    return active_subagents(facts.running_children)


def _decisions(facts: HandoffFacts) -> str:
    replies = _replies(facts.messages)[-REPLIES_QUOTED:]
    if not replies:
        return NOTHING_RECORDED
    quoted = "\n\n".join(_quote(m.content) for m in replies)
    return (
        "Decisions were not recorded as such (this hand-off was built from facts);"
        f" the agent's last {len(replies)} replies, quoted:\n\n{quoted}"
    )


def _files(facts: HandoffFacts) -> str:
    return files_section(facts.git)


def _next_steps(facts: HandoffFacts) -> str:
    open_prompt = _unanswered(facts.messages)
    if open_prompt is not None:
        return f"1. Answer the last request, not answered yet:\n\n{_quote(open_prompt.content)}"
    return (
        f"{NOTHING_RECORDED} The agent did not write this hand-off: read the last replies"
        " under Recent Decisions and carry on with the Current Task."
    )


def _important(facts: HandoffFacts) -> str:
    session = facts.session
    context = session.context
    lines = [
        f"- Working folder: {session.cwd}",
        f"- Agent: {session.agent_id}" + (f" (model {context.model})" if context.model else ""),
        f"- Session handing off: {session.conversation_id}",
    ]
    if session.continued_from:
        lines.append(f"- That session continued {session.continued_from}")
    return "\n".join(lines)


def _links(facts: HandoffFacts) -> str:
    lines = []
    if facts.previous_path:
        lines.append(f"- Previous hand-off: {facts.previous_path}")
    if facts.transcript:
        lines.append(f"- Transcript: {facts.transcript}")
    return "\n".join(lines) or NOTHING_RECORDED


def instructions(session: Session, project: str) -> str:
    """What a new instance does first (the same for both producers' documents)."""
    return "\n".join(
        [
            "1. Read this hand-off document completely.",
            f"2. Work in: {project}",
            "3. Check the sub-agents listed under Active Subagents"
            " (`delegate sessions show ID`); do not start them again while they run.",
            "4. Look at the uncommitted changes under Files Modified before changing anything.",
            "5. Continue from Next Steps.",
            "6. The previous session's messages:"
            f" `delegate sessions show {session.conversation_id}`.",
        ]
    )


def sections_from_facts(facts: HandoffFacts, project: str) -> dict[str, str]:
    """Every section of the template, from facts alone."""
    return {
        "Current Task": _current_task(facts),
        "Progress Summary": _progress(facts),
        "Active Subagents": _subagents(facts),
        "Recent Decisions": _decisions(facts),
        "Files Modified": _files(facts),
        "Next Steps": _next_steps(facts),
        "Important Context": _important(facts),
        "Links": _links(facts),
        "Instructions for New Instance": instructions(facts.session, project),
    }
