"""Role prompts: the prior hand-off block first, the task, then the protocol section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.returns.model import ROLE_STATUSES, AgentRole, RoleLaunch
from core.returns.parse import parse_return
from core.returns.paths import GroupPaths
from core.returns.prompt import (
    PRIOR_HEADING,
    PROTOCOL_HEADING,
    prior_handoff_block,
    protocol_section,
    role_prompt,
)
from core.returns.schemas import validate_handoff
from core.tokens import count_tokens

SESSION = "crp-20261127-061502-3fa9c1"
TASK = "Implement JWT authentication for the API.\nKeep the tests green."
BUDGET = 600
"""What a role's additions may cost on every launch (tokens)."""


def paths_in(repo: Path, group: str = "AUTH") -> GroupPaths:
    return GroupPaths(repo, SESSION, group)


def launch(role: AgentRole, previous: tuple[AgentRole, str] | None = None) -> RoleLaunch:
    return RoleLaunch(role, SESSION, "AUTH", previous)


def example_in(section: str) -> dict[str, object]:
    """The hand-off file example of a protocol section (its first fenced JSON block)."""
    found = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert found is not None
    value = json.loads(found.group(1))
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("role", list(AgentRole))
def test_the_protocol_section_names_the_file_statuses_and_three_lines(role: AgentRole) -> None:
    file = f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_{role.value}.json"
    section = protocol_section(role, file)
    assert section.startswith(PROTOCOL_HEADING)
    assert f"`{file}`" in section
    assert ", ".join(ROLE_STATUSES[role]) in section
    assert "exactly 3 one-line strings" in section
    assert "ONLY this JSON" in section
    for other in AgentRole:
        for status in set(ROLE_STATUSES[other]) - set(ROLE_STATUSES[role]):
            assert status not in section, (role, status)


@pytest.mark.parametrize("role", list(AgentRole))
def test_the_example_in_the_section_is_a_valid_file_of_the_role(role: AgentRole) -> None:
    section = protocol_section(role, "handoff.json", artifacts={"reasoning": "r.md"})
    model = validate_handoff(role, example_in(section), where="the prompt's example")
    assert model.artifacts == {"reasoning": "r.md"}


@pytest.mark.parametrize("role", list(AgentRole))
def test_the_answer_template_has_the_shape_parse_return_accepts(role: AgentRole) -> None:
    section = protocol_section(role, "handoff.json")
    template = re.findall(r"```json\n(.*?)\n```", section, re.DOTALL)[1]
    answer = template.replace("<STATUS>", ROLE_STATUSES[role][0])
    parsed = parse_return(answer, role, max_tokens=400)
    assert parsed.valid, parsed.reason


def test_the_prior_block_names_the_previous_role_and_its_file() -> None:
    file = f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json"
    block = prior_handoff_block(AgentRole.DEVELOPER, file)
    assert block.startswith(PRIOR_HEADING)
    assert "Developer's" in block
    assert f"`{file}`" in block
    assert "Before doing ANYTHING else" in block


def test_a_first_role_gets_the_task_then_the_protocol(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    prompt = role_prompt(TASK, launch(AgentRole.DEVELOPER), paths)
    assert PRIOR_HEADING not in prompt
    assert prompt.startswith(TASK)
    assert prompt.index(TASK) < prompt.index(PROTOCOL_HEADING)
    handoff = f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json"
    assert f"`{handoff}`" in prompt
    assert str(tmp_path) not in prompt  # paths from the repository root only


def test_a_next_role_reads_the_prior_hand_off_first(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    previous = paths.handoff_file(AgentRole.DEVELOPER)
    prompt = role_prompt(
        TASK, launch(AgentRole.QA_EXPERT, (AgentRole.DEVELOPER, str(previous))), paths
    )
    assert prompt.startswith(PRIOR_HEADING)
    prior, task, protocol = (
        prompt.index(PRIOR_HEADING),
        prompt.index(TASK),
        prompt.index(PROTOCOL_HEADING),
    )
    assert prior < task < protocol
    block = prompt[:task]
    assert f"`.delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json`" in block
    assert "handoff_qa_expert.json" in prompt[protocol:]
    assert str(tmp_path) not in prompt


def test_a_relative_previous_file_is_named_as_given(tmp_path: Path) -> None:
    given = f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_tech_lead.json"
    prompt = role_prompt(
        TASK, launch(AgentRole.PROJECT_MANAGER, (AgentRole.TECH_LEAD, given)), paths_in(tmp_path)
    )
    assert f"`{given}`" in prompt
    assert "Tech Lead" in prompt


@pytest.mark.parametrize(
    ("role", "key", "folder"),
    [
        (AgentRole.DEVELOPER, "test_output", "tests"),
        (AgentRole.SENIOR_SOFTWARE_ENGINEER, "test_output", "tests"),
        (AgentRole.QA_EXPERT, "test_report", "tests"),
        (AgentRole.TECH_LEAD, "review_details", "reviews"),
        (AgentRole.INVESTIGATOR, "root_cause", "investigations"),
        (AgentRole.PROJECT_MANAGER, "reasoning", "reasoning"),
        (AgentRole.REQUIREMENTS_ENGINEER, "reasoning", "reasoning"),
    ],
)
def test_the_prompt_says_where_long_details_go(
    tmp_path: Path, role: AgentRole, key: str, folder: str
) -> None:
    prompt = role_prompt(TASK, launch(role), paths_in(tmp_path))
    artifacts = example_in(prompt[prompt.index(PROTOCOL_HEADING) :])["artifacts"]
    assert isinstance(artifacts, dict)
    assert artifacts[key].startswith(f".delegate/artifacts/{SESSION}/{folder}/")
    assert "AUTH" in artifacts[key]
    assert artifacts["reasoning"].startswith(f".delegate/artifacts/{SESSION}/reasoning/")


@pytest.mark.parametrize("role", list(AgentRole))
@pytest.mark.parametrize(("group", "budget"), [("payments-refunds-v2", BUDGET), ("G" * 64, 650)])
def test_a_roles_additions_stay_within_the_token_budget(
    tmp_path: Path, role: AgentRole, group: str, budget: int
) -> None:
    # With a prior hand-off, the longest case; an id of the longest allowed length
    # costs a few dozen tokens more (it is named five times).
    paths = paths_in(tmp_path, group)
    previous = (AgentRole.SENIOR_SOFTWARE_ENGINEER, str(paths.handoff_file(AgentRole.DEVELOPER)))
    prompt = role_prompt(TASK, RoleLaunch(role, SESSION, group, previous), paths)
    added = count_tokens(prompt) - count_tokens(TASK)
    assert added < budget, added


def test_without_a_task_the_sections_stand_alone(tmp_path: Path) -> None:
    paths = paths_in(tmp_path)
    previous = (AgentRole.QA_EXPERT, str(paths.handoff_file(AgentRole.QA_EXPERT)))
    prompt = role_prompt("  \n", launch(AgentRole.TECH_LEAD, previous), paths)
    assert prompt.startswith(PRIOR_HEADING)
    between = prompt[prompt.index("reading it.") : prompt.index(PROTOCOL_HEADING)]
    assert between == "reading it.\n\n"


def test_without_artifact_files_the_section_asks_for_them() -> None:
    section = protocol_section(AgentRole.DEVELOPER, "handoff.json")
    assert example_in(section)["artifacts"] == {}
    assert 'listed under "artifacts"' in section
