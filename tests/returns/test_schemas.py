"""Hand-off file schemas: round-trips, statuses per role, typed keys, extra keys kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from core.errors import HandoffFileInvalid, UnknownRole
from core.returns.model import ROLE_STATUSES, AgentRole
from core.returns.schemas import (
    DeveloperHandoff,
    SeniorHandoff,
    handoff_example,
    handoff_schema,
    role_of,
    validate_handoff,
)

ALL_STATUSES = sorted({status for statuses in ROLE_STATUSES.values() for status in statuses})
WHERE = ".delegate/artifacts/s/AUTH/handoffs/handoff_x.json"


def full_file(role: AgentRole) -> dict[str, object]:
    """The role's example with every base field filled, and a key of the agent's own."""
    return {
        **handoff_example(role),
        "to_agent": "tech_lead",
        "timestamp": "2025-12-22T10:30:00Z",
        "session_id": "crp-20251222-103000-abcdef",
        "group_id": "AUTH",
        "artifacts": {"reasoning": "reasoning/x.md"},
        "my_own_note": {"nested": [1, 2, 3]},
    }


@pytest.mark.parametrize("role", list(AgentRole))
def test_every_role_round_trips_through_json(role: AgentRole) -> None:
    model = validate_handoff(role, full_file(role), where=WHERE)
    again = validate_handoff(role, json.loads(model.model_dump_json()), where=WHERE)
    assert again == model
    assert type(again) is handoff_schema(role)
    assert again.timestamp == datetime(2025, 12, 22, 10, 30, tzinfo=UTC)
    assert again.model_dump()["my_own_note"] == {"nested": [1, 2, 3]}


@pytest.mark.parametrize("role", list(AgentRole))
def test_the_example_is_a_valid_file_of_its_role(role: AgentRole) -> None:
    example = handoff_example(role)
    assert example["from_agent"] == role.value
    assert isinstance(validate_handoff(role, example, where=WHERE), handoff_schema(role))


@pytest.mark.parametrize("role", list(AgentRole))
@pytest.mark.parametrize("status", ALL_STATUSES)
def test_a_status_is_valid_only_for_the_roles_that_may_return_it(
    role: AgentRole, status: str
) -> None:
    data = {**handoff_example(role), "status": status}
    if status in ROLE_STATUSES[role]:
        assert validate_handoff(role, data, where=WHERE).status == status
    else:
        with pytest.raises(HandoffFileInvalid) as caught:
            validate_handoff(role, data, where=WHERE)
        assert WHERE in caught.value.message
        assert "status" in caught.value.message
        assert ROLE_STATUSES[role][0] in caught.value.message  # says what is allowed


def test_the_senior_engineer_shares_the_developer_schema() -> None:
    assert issubclass(SeniorHandoff, DeveloperHandoff)
    data = {**handoff_example(AgentRole.DEVELOPER), "from_agent": "senior_software_engineer"}
    assert validate_handoff(AgentRole.SENIOR_SOFTWARE_ENGINEER, data, where=WHERE).tests


def test_a_file_from_another_role_is_refused() -> None:
    data = handoff_example(AgentRole.DEVELOPER)
    with pytest.raises(HandoffFileInvalid, match="from_agent"):
        validate_handoff(AgentRole.SENIOR_SOFTWARE_ENGINEER, data, where=WHERE)


def test_short_role_names_are_read_in_the_file() -> None:
    data = {**handoff_example(AgentRole.QA_EXPERT), "from_agent": "qa", "to_agent": "TL"}
    model = validate_handoff(AgentRole.QA_EXPERT, data, where=WHERE)
    assert model.from_agent is AgentRole.QA_EXPERT
    assert model.to_agent is AgentRole.TECH_LEAD
    pm = {**handoff_example(AgentRole.PROJECT_MANAGER), "status": "BAZINGA", "to_agent": "END"}
    assert validate_handoff(AgentRole.PROJECT_MANAGER, pm, where=WHERE).to_agent == "end"


@pytest.mark.parametrize(
    ("role", "key", "value"),
    [
        (AgentRole.DEVELOPER, "files_modified", "src/a.py"),  # a list, not text
        (AgentRole.DEVELOPER, "tests", {"total": -1}),
        (AgentRole.DEVELOPER, "tech_debt_logged", "perhaps"),
        (AgentRole.QA_EXPERT, "tests_run", {"e2e": {"passed": "many"}}),
        (AgentRole.TECH_LEAD, "code_quality_score", 11),
        (AgentRole.TECH_LEAD, "decision", "MAYBE"),
        (AgentRole.DEVELOPER, "artifacts", {"reasoning": 3}),
        (AgentRole.DEVELOPER, "summary", "   "),
        (AgentRole.DEVELOPER, "timestamp", "yesterday"),
        (AgentRole.DEVELOPER, "to_agent", "nobody"),
    ],
)
def test_typed_keys_are_checked_and_the_message_names_the_field(
    role: AgentRole, key: str, value: object
) -> None:
    data = {**handoff_example(role), key: value}
    with pytest.raises(HandoffFileInvalid) as caught:
        validate_handoff(role, data, where=WHERE)
    assert caught.value.code == "handoff_file_invalid"
    assert caught.value.message.startswith(WHERE)
    assert key in caught.value.message


@pytest.mark.parametrize("key", ["from_agent", "status", "summary"])
def test_the_base_keys_are_required(key: str) -> None:
    data = handoff_example(AgentRole.TECH_LEAD)
    del data[key]
    with pytest.raises(HandoffFileInvalid, match=key):
        validate_handoff(AgentRole.TECH_LEAD, data, where=WHERE)


@pytest.mark.parametrize("data", [None, [], "text", 3, [handoff_example(AgentRole.DEVELOPER)]])
def test_anything_but_one_object_is_refused(data: object) -> None:
    with pytest.raises(HandoffFileInvalid, match="one JSON object"):
        validate_handoff(AgentRole.DEVELOPER, data, where=WHERE)


def test_a_message_quotes_no_value_and_lists_a_few_fields_only() -> None:
    secret = "sk-" + "x" * 5000
    data = {
        **handoff_example(AgentRole.DEVELOPER),
        "files_modified": [{"bad": i} for i in range(50)],
        "branch": [secret],
    }
    with pytest.raises(HandoffFileInvalid) as caught:
        validate_handoff(AgentRole.DEVELOPER, data, where=WHERE)
    assert secret not in caught.value.message
    assert "more" in caught.value.message
    assert len(caught.value.message) < 1_000


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("developer", AgentRole.DEVELOPER),
        ("dev", AgentRole.DEVELOPER),
        ("SSE", AgentRole.SENIOR_SOFTWARE_ENGINEER),
        ("senior-software-engineer", AgentRole.SENIOR_SOFTWARE_ENGINEER),
        ("qa", AgentRole.QA_EXPERT),
        ("QA expert", AgentRole.QA_EXPERT),
        ("tl", AgentRole.TECH_LEAD),
        (" pm ", AgentRole.PROJECT_MANAGER),
        ("investigator", AgentRole.INVESTIGATOR),
        ("requirements_engineer", AgentRole.REQUIREMENTS_ENGINEER),
    ],
)
def test_role_of_reads_values_and_short_names(name: str, role: AgentRole) -> None:
    assert role_of(name) is role


@pytest.mark.parametrize("name", ["", "qa_lead", "../developer", "x" * 10_000])
def test_role_of_refuses_an_unknown_role_listing_the_roles(name: str) -> None:
    with pytest.raises(UnknownRole) as caught:
        role_of(name)
    assert caught.value.code == "unknown_role"
    for role in AgentRole:
        assert role.value in caught.value.message
    assert len(caught.value.message) < 400


def test_a_summary_written_as_lines_is_read_as_one_text() -> None:
    data = {**handoff_example(AgentRole.DEVELOPER), "summary": ["Did X", "Changed Y", "Tests pass"]}
    model = validate_handoff(AgentRole.DEVELOPER, data, where=WHERE)
    assert model.summary == "Did X\nChanged Y\nTests pass"
    with pytest.raises(HandoffFileInvalid, match="summary"):
        validate_handoff(AgentRole.DEVELOPER, {**data, "summary": []}, where=WHERE)


def test_numbers_where_the_seed_writes_text_are_accepted() -> None:
    dev = {**handoff_example(AgentRole.DEVELOPER), "tests": {"total": 3, "coverage": 92.5}}
    assert validate_handoff(AgentRole.DEVELOPER, dev, where=WHERE).tests is not None
    qa = {**handoff_example(AgentRole.QA_EXPERT), "tests_run": {"e2e": {"duration": 105}}}
    assert validate_handoff(AgentRole.QA_EXPERT, qa, where=WHERE).tests_run["e2e"].duration == 105
