"""Routing: each status to its next role, loops back to the developer, overrides, bad tables."""

from __future__ import annotations

import pytest

from core.config import ReturnsSettings, Settings
from core.errors import InvalidConfig
from core.returns.model import END, INVALID_RETURN, ROLE_STATUSES, AgentRole
from core.returns.routing import Routes

DEV, SSE, QA, TL, PM, INV, RE = (
    AgentRole.DEVELOPER,
    AgentRole.SENIOR_SOFTWARE_ENGINEER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
    AgentRole.INVESTIGATOR,
    AgentRole.REQUIREMENTS_ENGINEER,
)


def routes(**table: str) -> Routes:
    return Routes.from_settings(ReturnsSettings(routes=table))


@pytest.mark.parametrize(
    ("role", "status", "target"),
    [
        (DEV, "READY_FOR_QA", QA),
        (SSE, "READY_FOR_QA", QA),
        (DEV, "READY_FOR_REVIEW", TL),
        (QA, "PASS", TL),
        (TL, "APPROVED", PM),
        (PM, "BAZINGA", END),
        (DEV, "BLOCKED", INV),
        (DEV, "ESCALATE_SENIOR", SSE),
        (TL, "SPAWN_INVESTIGATOR", INV),
        (INV, "ROOT_CAUSE_FOUND", DEV),
        (RE, "REQUIREMENTS_READY", DEV),
    ],
)
def test_the_seed_table_routes_each_status(role: AgentRole, status: str, target: str) -> None:
    assert Routes.from_settings(ReturnsSettings()).next_role(role, status) == target


@pytest.mark.parametrize(
    ("role", "status"), [(QA, "FAIL"), (QA, "FLAKY"), (TL, "CHANGES_REQUESTED")]
)
def test_failures_loop_back_to_the_developer(role: AgentRole, status: str) -> None:
    assert Routes.from_settings(ReturnsSettings()).next_role(role, status) is DEV


def test_a_full_cycle_with_one_loop_back_reaches_the_end() -> None:
    table = Routes.from_settings(Settings().returns)
    steps = [(DEV, "READY_FOR_QA"), (QA, "FAIL"), (DEV, "READY_FOR_QA"), (QA, "PASS")]
    steps += [(TL, "APPROVED"), (PM, "BAZINGA")]
    assert [table.next_role(role, status) for role, status in steps] == [QA, DEV, QA, TL, PM, END]


def test_every_builtin_status_of_every_role_has_a_route() -> None:
    table = Routes.from_settings(ReturnsSettings())
    for role, statuses in ROLE_STATUSES.items():
        for status in statuses:
            assert table.next_role(role, status) is not None, (role, status)


def test_a_role_specific_key_beats_the_plain_status() -> None:
    table = routes(**{"qa_expert:BLOCKED": "developer"})
    assert table.next_role(QA, "BLOCKED") is DEV
    assert table.next_role(DEV, "BLOCKED") is INV  # the plain key still routes the others
    assert table.next_role(PM, "BLOCKED") is INV


def test_short_names_are_read_in_keys_and_targets() -> None:
    table = routes(**{"qa:BLOCKED": "sse", "PASS": "TL", "APPROVED": "END"})
    assert table.next_role(QA, "BLOCKED") is SSE
    assert table.next_role(QA, "PASS") is TL
    assert table.next_role(TL, "APPROVED") == END


def test_a_config_route_replaces_one_route_only() -> None:
    table = routes(PASS="end")
    assert table.next_role(QA, "PASS") == END
    assert table.next_role(DEV, "READY_FOR_QA") is QA


def test_an_invalid_return_routes_nowhere() -> None:
    table = Routes.from_settings(ReturnsSettings())
    for role in AgentRole:
        assert table.next_role(role, INVALID_RETURN) is None


def test_a_status_the_role_may_not_return_routes_nowhere() -> None:
    assert Routes.from_settings(ReturnsSettings()).next_role(DEV, "PASS") is None


def test_a_status_without_a_route_routes_nowhere() -> None:
    table = Routes.from_table({"READY_FOR_QA": "qa_expert"})
    assert table.next_role(DEV, "READY_FOR_QA") is QA
    assert table.next_role(QA, "PASS") is None


@pytest.mark.parametrize(
    ("key", "target", "said"),
    [
        ("PASS", "nobody", "target"),
        ("PASS", "../developer", "target"),
        ("APROVED", "project_manager", "APROVED"),
        ("pass", "tech_lead", "upper case"),
        ("qa_lead:PASS", "tech_lead", "unknown role"),
        ("developer:PASS", "tech_lead", "not a developer status"),
        (":PASS", "tech_lead", "unknown role"),
    ],
)
def test_a_bad_table_is_invalid_config_naming_the_key(key: str, target: str, said: str) -> None:
    with pytest.raises(InvalidConfig) as caught:
        routes(**{key: target})
    assert caught.value.code == "invalid_config"
    assert "[returns] routes" in caught.value.message
    assert repr(key) in caught.value.message
    assert said in caught.value.message
