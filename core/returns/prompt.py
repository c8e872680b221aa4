"""A role's prompt additions (seed 002): read the prior hand-off first, write your own last.

``role_prompt`` is a role launch's first prompt: the "Prior Agent Handoff (MANDATORY
FIRST ACTION)" block when a role came before, the task, then the "Handoff Protocol
(MANDATORY)" section. Both are sent on every launch, so they are kept short: the
hand-off file's shape is shown by a filled example, and the final answer by its
one-line template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from core.returns.display import ROLE_NAMES
from core.returns.model import ROLE_STATUSES, SUMMARY_LINES, AgentRole, RoleLaunch
from core.returns.schemas import handoff_example

if TYPE_CHECKING:
    from core.returns.paths import GroupPaths

PROTOCOL_HEADING: Final = "## Handoff Protocol (MANDATORY)"
PRIOR_HEADING: Final = "## Prior Agent Handoff (MANDATORY FIRST ACTION)"

SUMMARY_GUIDE: Final[dict[AgentRole, tuple[str, str, str]]] = {
    AgentRole.DEVELOPER: (
        "Implemented X",
        "Created/modified N files: a.py, b.py",
        "N tests passing, N% coverage",
    ),
    AgentRole.SENIOR_SOFTWARE_ENGINEER: (
        "Implemented X",
        "Created/modified N files: a.py, b.py",
        "N tests passing, N% coverage",
    ),
    AgentRole.QA_EXPERT: (
        "Tested X",
        "Ran integration/contract/E2E tests",
        "N/N tests passed, quality: good",
    ),
    AgentRole.TECH_LEAD: (
        "Reviewed X",
        "Checked security, architecture, tests",
        "Approved / changes requested: why",
    ),
    AgentRole.PROJECT_MANAGER: (
        "Tracked X",
        "N groups complete, M remaining",
        "Proceeding with phase N / BAZINGA",
    ),
    AgentRole.INVESTIGATOR: (
        "Investigated X",
        "Analyzed N files, found the root cause",
        "Solution: in brief",
    ),
    AgentRole.REQUIREMENTS_ENGINEER: (
        "Gathered requirements for X",
        "N requirements, M open questions",
        "Ready / needs clarification: what",
    ),
}
"""The seed's three-line guide per role: what was done, what changed, the result."""


def artifact_files(role: AgentRole, paths: GroupPaths) -> dict[str, str]:
    """Where ``role`` puts its long details (seed 002's layout), repo-relative, by the
    ``artifacts`` key its hand-off file lists them under."""
    group = paths.group
    files = {"reasoning": paths.reasoning_dir / f"{role.value}_{group}.md"}
    if role in (AgentRole.DEVELOPER, AgentRole.SENIOR_SOFTWARE_ENGINEER):
        files["test_output"] = paths.tests_dir / f"{group}_{role.value}.md"
    elif role is AgentRole.QA_EXPERT:
        files["test_report"] = paths.tests_dir / f"{group}_qa_expert.md"
    elif role is AgentRole.TECH_LEAD:
        files["review_details"] = paths.reviews_dir / f"{group}_tech_lead.md"
    elif role is AgentRole.INVESTIGATOR:
        files["root_cause"] = paths.investigations_dir / f"{group}_root_cause.md"
    return {key: paths.relative(path) for key, path in files.items()}


def protocol_section(
    role: AgentRole,
    handoff_file: str,
    *,
    artifacts: Mapping[str, str] | None = None,
    repo_relative: bool = False,
) -> str:
    """The "Handoff Protocol (MANDATORY)" section for ``role``: write the hand-off file
    (``handoff_file``, the role's schema by example; long details in the ``artifacts``
    files), then answer only the minimal JSON: one of the role's statuses, three lines."""
    example = handoff_example(role)
    if artifacts:
        example["artifacts"] = dict(artifacts)
    root = " (paths from the repository root)" if repo_relative else ""
    guide = json.dumps(list(SUMMARY_GUIDE[role]), ensure_ascii=False)
    details = (
        'Long details (reasoning, test output, reviews) go in the "artifacts" files, not in'
        " the hand-off."
        if artifacts
        else 'Put long details in files of their own, listed under "artifacts".'
    )
    lines = [
        PROTOCOL_HEADING,
        "",
        f"1. Before your final response, write your hand-off file `{handoff_file}`{root}:"
        " all the next agent needs (files changed, test results, concerns, branch), as JSON"
        " like this (status as in your answer; add keys if needed):",
        "```json",
        json.dumps(example, ensure_ascii=False),
        "```",
        details,
        "2. Then your final response is ONLY this JSON, nothing before or after it:",
        "```json",
        f'{{"status": "<STATUS>", "summary": {guide}}}',
        "```",
        f"status: one of {', '.join(ROLE_STATUSES[role])}. summary: exactly {SUMMARY_LINES}"
        " one-line strings: what you did, what changed, the result. Any other answer is"
        " rejected.",
    ]
    return "\n".join(lines)


def prior_handoff_block(previous_role: AgentRole, handoff_file: str) -> str:
    """The "Prior Agent Handoff (MANDATORY FIRST ACTION)" block: read the previous
    role's hand-off file before anything else."""
    return (
        f"{PRIOR_HEADING}\n\nBefore doing ANYTHING else, read the {ROLE_NAMES[previous_role]}'s"
        f" hand-off: `{handoff_file}`. It holds what they did, files changed, test results,"
        " concerns and the branch. Do NOT proceed without reading it."
    )


def _shown(paths: GroupPaths, file: str) -> str:
    path = Path(file)
    return paths.relative(path) if path.is_absolute() else file


def role_prompt(task: str, launch: RoleLaunch, paths: GroupPaths) -> str:
    """A role launch's first prompt: the prior hand-off block (when a role came before),
    the task, then the protocol section. Paths are relative to the repository root; an
    empty task leaves the two sections alone."""
    parts = []
    if launch.previous is not None:
        previous_role, previous_file = launch.previous
        parts.append(prior_handoff_block(previous_role, _shown(paths, previous_file)))
    if task.strip():  # without a task: the sections alone (what `returns prompt` shows)
        parts.append(task.strip())
    parts.append(
        protocol_section(
            launch.role,
            paths.relative(paths.handoff_file(launch.role)),
            artifacts=artifact_files(launch.role, paths),
            repo_relative=True,
        )
    )
    return "\n\n".join(parts) + "\n"
