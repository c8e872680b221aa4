"""The display line: the seed's format per role, the next role's name, one flat line always."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.returns.display import display_line, one_line
from core.returns.model import END, INVALID_RETURN, AgentRole, CompactReturn

LINES = (
    "Implemented JWT authentication",
    "Created 3 files: jwt_handler.py, auth_middleware.py, test_jwt.py",
    "15 tests passing, 92% coverage",
)


def test_the_seeds_developer_example_exactly() -> None:
    line = display_line(
        "AUTH", AgentRole.DEVELOPER, CompactReturn("READY_FOR_QA", LINES), "qa_expert"
    )
    assert line == (
        "🔨 Group AUTH [Developer] | Implemented JWT authentication | Created 3 files:"
        " jwt_handler.py, auth_middleware.py, test_jwt.py | 15 tests passing, 92% coverage"
        " → QA Expert"
    )


@pytest.mark.parametrize(
    ("role", "status", "next_role", "expected"),
    [
        (
            AgentRole.DEVELOPER,
            "READY_FOR_QA",
            AgentRole.QA_EXPERT,
            "🔨 Group G [Developer] | a | b | c → QA Expert",
        ),
        (
            AgentRole.SENIOR_SOFTWARE_ENGINEER,
            "READY_FOR_REVIEW",
            AgentRole.TECH_LEAD,
            "🧠 Group G [SSE] | a | b | c → Tech Lead",
        ),
        (
            AgentRole.QA_EXPERT,
            "PASS",
            AgentRole.TECH_LEAD,
            "✅ Group G [QA] | a | b | c → Tech Lead",
        ),
        (
            AgentRole.QA_EXPERT,
            "FAIL",
            AgentRole.DEVELOPER,
            "❌ Group G [QA] | a | b | c → Developer",
        ),
        (
            AgentRole.QA_EXPERT,
            "FLAKY",
            AgentRole.DEVELOPER,
            "🧪 Group G [QA] | a | b | c → Developer",
        ),
        (
            AgentRole.TECH_LEAD,
            "APPROVED",
            AgentRole.PROJECT_MANAGER,
            "👔 Group G [TL] | a | b | c → Project Manager",
        ),
        (
            AgentRole.TECH_LEAD,
            "CHANGES_REQUESTED",
            "developer",
            "👔 Group G [TL] | a | b | c → Developer",
        ),
        (AgentRole.PROJECT_MANAGER, "BAZINGA", END, "🎉 Group G [PM] | a | b | c → end"),
        (
            AgentRole.PROJECT_MANAGER,
            "CONTINUE",
            AgentRole.DEVELOPER,
            "📋 Group G [PM] | a | b | c → Developer",
        ),
        (
            AgentRole.INVESTIGATOR,
            "ROOT_CAUSE_FOUND",
            AgentRole.DEVELOPER,
            "🔍 Group G [Investigator] | a | b | c → Developer",
        ),
        (
            AgentRole.REQUIREMENTS_ENGINEER,
            "NEEDS_CLARIFICATION",
            None,
            "📝 Group G [RE] | a | b | c → stop",
        ),
        (
            AgentRole.DEVELOPER,
            "BLOCKED",
            AgentRole.INVESTIGATOR,
            "🔨 Group G [Developer] | a | b | c → Investigator",
        ),
        (
            AgentRole.DEVELOPER,
            "ESCALATE_SENIOR",
            AgentRole.SENIOR_SOFTWARE_ENGINEER,
            "🔨 Group G [Developer] | a | b | c → Senior Software Engineer",
        ),
    ],
)
def test_each_role_has_its_emoji_label_and_next_name(
    role: AgentRole, status: str, next_role: str | None, expected: str
) -> None:
    assert display_line("G", role, CompactReturn(status, ("a", "b", "c")), next_role) == expected


def test_an_invalid_return_stops_whatever_the_route_says() -> None:
    answer = CompactReturn(INVALID_RETURN, ("rejected (verbose)", "found text", "see messages"))
    line = display_line("AUTH", AgentRole.QA_EXPERT, answer, AgentRole.TECH_LEAD)
    assert line == "⛔ Group AUTH [QA] | rejected (verbose) | found text | see messages → stop"


@pytest.mark.parametrize(
    ("raw", "flat"),
    [
        ("two\nlines", "two lines"),
        ("crlf\r\nand\ttab", "crlf and tab"),
        ("escape \x1b[2J\x1b]0;title\x07 gone", "escape [2J ]0;title gone"),
        ("bidi \u202eevil\u202c text", "bidi evil text"),
        ("sep\u2028para\u2029end", "sep para end"),
        ("nul\x00del\x7fc1\x85", "nul del c1"),
        ("lone \ud800 surrogate", "lone surrogate"),
        ("  padded   spaces  ", "padded spaces"),
    ],
)
def test_control_characters_and_newlines_are_flattened(raw: str, flat: str) -> None:
    line = display_line(
        "G", AgentRole.DEVELOPER, CompactReturn("READY_FOR_QA", (raw, raw, raw)), END
    )
    assert line == f"🔨 Group G [Developer] | {flat} | {flat} | {flat} → end"


def test_a_hostile_group_id_is_flattened_too() -> None:
    line = display_line(
        "A\nB\x1b", AgentRole.DEVELOPER, CompactReturn("BLOCKED", ("a", "b", "c")), None
    )
    assert line.startswith("🔨 Group A B [Developer]")
    assert line.splitlines() == [line]


def test_a_very_long_line_is_cut_with_an_ellipsis() -> None:
    assert one_line("x" * 1000, 50) == "x" * 49 + "…"
    assert len(one_line("word " * 1000)) == 300


@given(st.text(), st.text(), st.text(), st.sampled_from(list(AgentRole)))
def test_any_summary_makes_one_printable_line(a: str, b: str, c: str, role: AgentRole) -> None:
    line = display_line("G", role, CompactReturn("BLOCKED", (a, b, c)), None)
    assert line.splitlines() == [line]
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in line)
    line.encode("utf-8")  # no lone surrogate
