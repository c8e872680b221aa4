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
    session: str | None = None,
    group: str | None = None,
    repo_relative: bool = False,
) -> str:
    """The "Handoff Protocol (MANDATORY)" section for ``role``: write the hand-off file
    (``handoff_file``, the role's schema by example; long details in ``artifacts``),
    then answer only the minimal JSON with one of the role's statuses and three lines."""
    example = handoff_example(role)
    ids = {"session_id": session, "group_id": group}
    # the ids right after from_agent, as the seed's example has them
    example = {
        "from_agent": example.pop("from_agent"),
        **{key: value for key, value in ids.items() if value is not None},
        **example,
    }
    if artifacts:
        example["artifacts"] = dict(artifacts)
    statuses = ", ".join(ROLE_STATUSES[role])
    guide = json.dumps(list(SUMMARY_GUIDE[role]), ensure_ascii=False)
    details = (
        "Write long details (reasoning, test output, reviews) into the files named under"
        ' "artifacts", not into the hand-off file.'
        if artifacts
        else 'List any file with long details under "artifacts".'
    )
    root = " (paths are relative to the repository root)" if repo_relative else ""
    lines = [
        PROTOCOL_HEADING,
        "",
        f"1. Before your final response, write your hand-off file `{handoff_file}`{root}:"
        " everything the next agent needs (files changed, test results, concerns, branch)."
        " JSON, in this shape (keys may be added; status as in your answer):",
        "```json",
        json.dumps(example, ensure_ascii=False),
        "```",
        details,
        "2. Your final response must then be ONLY this JSON: no text before or after it.",
        "```json",
        f'{{"status": "<STATUS>", "summary": {guide}}}',
        "```",
        f"- status: one of {statuses}.",
        f"- summary: exactly {SUMMARY_LINES} lines, each one short line: what you did,"
        " what changed, the result.",
        "A longer or different answer is rejected and not passed on.",
    ]
    return "\n".join(lines)


def prior_handoff_block(previous_role: AgentRole, handoff_file: str) -> str:
    """The "Prior Agent Handoff (MANDATORY FIRST ACTION)" block: read the previous
    role's hand-off file before anything else."""
    name = ROLE_NAMES[previous_role]
    return "\n".join(
        [
            PRIOR_HEADING,
            "",
            f"Before doing ANYTHING else, read the hand-off from the {name}: `{handoff_file}`",
            "It holds what they did, the files changed, test results, concerns and the"
            " branch. Do NOT proceed without reading it.",
        ]
    )


def _shown(paths: GroupPaths, file: str) -> str:
    path = Path(file)
    return paths.relative(path) if path.is_absolute() else file


def role_prompt(task: str, launch: RoleLaunch, paths: GroupPaths) -> str:
    """A role launch's first prompt: the prior hand-off block (when a role came before),
    the task, then the protocol section. Paths are relative to the repository root."""
    parts = []
    if launch.previous is not None:
        previous_role, previous_file = launch.previous
        parts.append(prior_handoff_block(previous_role, _shown(paths, previous_file)))
    parts.append(task.strip())
    parts.append(
        protocol_section(
            launch.role,
            paths.relative(paths.handoff_file(launch.role)),
            artifacts=artifact_files(launch.role, paths),
            session=launch.artifacts_session,
            group=launch.group_id,
            repo_relative=True,
        )
    )
    return "\n\n".join(parts) + "\n"
