"""Judging a final message: the minimal return passes, anything else becomes INVALID_RETURN."""

from __future__ import annotations

import json
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.returns.model import (
    INVALID_RETURN,
    ROLE_STATUSES,
    AgentRole,
    CompactReturn,
    ParsedReturn,
    ReturnRule,
)
from core.returns.parse import parse_return, rejected
from core.tokens import count_tokens

DEV = AgentRole.DEVELOPER
LINES = [
    "Implemented JWT authentication with token generation and validation",
    "Created 3 files: jwt_handler.py, auth_middleware.py, test_jwt.py",
    "All 15 tests passing with 92% coverage",
]
MINIMAL = json.dumps({"status": "READY_FOR_QA", "summary": LINES})
BUDGET = 400
CONVERSATION = "conv-0123456789abcdef"


BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def one_printable_line(line: str) -> bool:
    """No control character, line break, lone surrogate or bidirectional control."""
    return line.splitlines() == [line] and not any(
        unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cs") or char in BIDI for char in line
    )


def parse(text: str, role: AgentRole = DEV, *, max_tokens: int = BUDGET) -> ParsedReturn:
    return parse_return(text, role, max_tokens=max_tokens, conversation_id=CONVERSATION)


def assert_invalid(parsed: ParsedReturn, rule: ReturnRule) -> None:
    assert not parsed.valid
    assert parsed.rule is rule, (parsed.rule, parsed.reason)
    assert parsed.answer.status == INVALID_RETURN
    lines = parsed.answer.summary
    assert len(lines) == 3
    for line in lines:
        assert line.strip()
        assert one_printable_line(line)
        assert len(line) <= 200
    assert lines[2] == f"Full text: delegate_sessions messages {CONVERSATION}"
    assert rule.value in lines[0]
    assert parsed.reason


def test_the_minimal_json_alone_is_the_answer() -> None:
    parsed = parse(MINIMAL)
    assert parsed.valid
    assert parsed.rule is None
    assert parsed.reason == ""
    assert parsed.answer == CompactReturn("READY_FOR_QA", tuple(LINES))  # type: ignore[arg-type]
    assert parsed.tokens == count_tokens(MINIMAL)
    assert parsed.answer.payload() == json.loads(MINIMAL)


def test_surrounding_whitespace_and_pretty_printing_are_fine() -> None:
    pretty = "\n\n  " + json.dumps(json.loads(MINIMAL), indent=2) + "\n\n"
    assert parse(pretty).valid


@pytest.mark.parametrize("info", ["json", "JSON", ""])
def test_one_fenced_block_is_read(info: str) -> None:
    parsed = parse(f"```{info}\n{MINIMAL}\n```\n")
    assert parsed.valid
    assert parsed.answer.summary == tuple(LINES)


def test_a_fence_of_another_language_is_not_the_return() -> None:
    assert_invalid(parse(f"```python\n{MINIMAL}\n```"), ReturnRule.VERBOSE)


@pytest.mark.parametrize(
    "text",
    [
        f"Done! Here is my return:\n{MINIMAL}",
        f"{MINIMAL}\nLet me know if you need anything else.",
        f"## Implementation Complete\n\n```json\n{MINIMAL}\n```\n\n**Status:** READY_FOR_QA",
    ],
)
def test_text_around_the_json_is_verbose(text: str) -> None:
    assert_invalid(parse(text), ReturnRule.VERBOSE)


@pytest.mark.parametrize(
    "text",
    [
        '{"status": "READY_FOR_QA", "summary": ["a", "b", "c"],}',
        '{"status": "READY_FOR_QA", "summary": ["a", "b", "c"]',
        "{status: READY_FOR_QA}",
        "```json\n{'status': 'READY_FOR_QA'}\n```",
        "Implemented the feature, all tests pass. READY_FOR_QA",
    ],
)
def test_malformed_json_is_not_json(text: str) -> None:
    parsed = parse(text)
    assert_invalid(parsed, ReturnRule.NOT_JSON)


def test_the_reason_says_where_the_json_breaks() -> None:
    parsed = parse('{"status": "READY_FOR_QA", "summary": ["a", "b", "c"],}')
    assert "line 1" in parsed.reason
    assert "column" in parsed.reason


@pytest.mark.parametrize(
    "text",
    [
        f"{MINIMAL}\n{MINIMAL}",
        f"```json\n{MINIMAL}\n```\n```json\n{MINIMAL}\n```",
        f"```json\n{MINIMAL}\n{MINIMAL}\n```",
        f"First:\n{MINIMAL}\nand then:\n{MINIMAL}",
    ],
)
def test_two_json_objects_are_refused(text: str) -> None:
    assert_invalid(parse(text), ReturnRule.TWO_OBJECTS)


@pytest.mark.parametrize("role", list(AgentRole))
@pytest.mark.parametrize(
    "status", sorted({s for statuses in ROLE_STATUSES.values() for s in statuses})
)
def test_the_status_must_be_one_of_the_roles(role: AgentRole, status: str) -> None:
    parsed = parse(json.dumps({"status": status, "summary": LINES}), role)
    if status in ROLE_STATUSES[role]:
        assert parsed.valid
        assert parsed.answer.status == status
    else:
        assert_invalid(parsed, ReturnRule.STATUS)
        assert ROLE_STATUSES[role][0] in parsed.reason


@pytest.mark.parametrize("status", ["ready_for_qa", INVALID_RETURN, "", 3, None, ["PASS"]])
def test_odd_statuses_are_refused(status: object) -> None:
    assert_invalid(parse(json.dumps({"status": status, "summary": LINES})), ReturnRule.STATUS)


@pytest.mark.parametrize(
    "summary",
    [
        LINES[:2],
        [*LINES, "a fourth line"],
        [],
        [LINES[0], "", LINES[2]],
        [LINES[0], "   ", LINES[2]],
        [LINES[0], "two\nlines", LINES[2]],
        [LINES[0], "carriage\rreturn", LINES[2]],
        [LINES[0], "separator\u2028here", LINES[2]],
        [LINES[0], 3, LINES[2]],
        [LINES[0], "lone \ud800 surrogate", LINES[2]],
        "one string with all three lines",
        {"1": "a", "2": "b", "3": "c"},
    ],
)
def test_the_summary_must_be_exactly_three_one_line_texts(summary: object) -> None:
    parsed = parse(json.dumps({"status": "READY_FOR_QA", "summary": summary}))
    assert_invalid(parsed, ReturnRule.SUMMARY_LINES)


@pytest.mark.parametrize(
    "payload",
    [
        {"status": "READY_FOR_QA", "summary": LINES, "files": ["a.py"]},
        {"status": "READY_FOR_QA"},
        {"summary": LINES},
        {},
    ],
)
def test_missing_or_extra_keys_break_the_shape(payload: dict[str, object]) -> None:
    parsed = parse(json.dumps(payload))
    assert_invalid(parsed, ReturnRule.SHAPE)


def test_the_shape_reason_names_the_extra_key() -> None:
    parsed = parse(json.dumps({"status": "READY_FOR_QA", "summary": LINES, "files": []}))
    assert "files" in parsed.reason


@pytest.mark.parametrize("text", ["[1, 2, 3]", '"READY_FOR_QA"', "42", "null"])
def test_json_that_is_not_an_object_breaks_the_shape(text: str) -> None:
    assert_invalid(parse(text), ReturnRule.SHAPE)


def test_a_repeated_key_breaks_the_shape() -> None:
    text = '{"status": "BLOCKED", "status": "READY_FOR_QA", "summary": ["a", "b", "c"]}'
    parsed = parse(text)
    assert_invalid(parsed, ReturnRule.SHAPE)
    assert "status" in parsed.reason


def test_over_the_budget_is_too_long_even_when_well_formed() -> None:
    long_lines = [line * 40 for line in LINES]
    text = json.dumps({"status": "READY_FOR_QA", "summary": long_lines})
    parsed = parse(text)
    assert_invalid(parsed, ReturnRule.TOO_LONG)
    assert parsed.tokens == count_tokens(text) > BUDGET
    assert f"{BUDGET:,}" in parsed.reason
    assert parse(text, max_tokens=10_000).valid


def test_the_budget_is_inclusive() -> None:
    tokens = count_tokens(MINIMAL)
    assert parse(MINIMAL, max_tokens=tokens).valid
    assert_invalid(parse(MINIMAL, max_tokens=tokens - 1), ReturnRule.TOO_LONG)


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_an_empty_message_is_empty(text: str) -> None:
    assert_invalid(parse(text), ReturnRule.EMPTY)


def test_the_third_line_names_the_conversation_and_falls_back_without_one() -> None:
    parsed = parse_return("nope", DEV, max_tokens=BUDGET)
    assert "delegate_sessions messages" in parsed.answer.summary[2]
    assert len(parsed.answer.summary) == 3


def test_rejected_is_the_same_answer_for_a_problem_found_later() -> None:
    parsed = rejected(
        ReturnRule.NO_HANDOFF,
        "handoff_developer.json is missing",
        DEV,
        57,
        CONVERSATION,
    )
    assert_invalid(parsed, ReturnRule.NO_HANDOFF)
    assert parsed.tokens == 57
    assert "handoff_developer.json is missing" in parsed.answer.summary[0]
    assert "[Developer]" in parsed.answer.summary[0] or "Developer" in parsed.answer.summary[0]


def test_a_hostile_reason_or_id_is_flattened_into_short_lines() -> None:
    parsed = rejected(ReturnRule.EMPTY, "a\nb\x1b[2Jc" * 500, DEV, 0, "conv\nx")
    for line in parsed.answer.summary:
        assert one_printable_line(line)
        assert len(line) <= 200
    assert "\n" not in parsed.reason


def test_what_the_agent_wrote_is_quoted_briefly_and_flattened() -> None:
    status = "NOT\nA\x1b[31mSTATUS" * 100
    parsed = parse(json.dumps({"status": status, "summary": LINES}), max_tokens=5_000)
    assert_invalid(parsed, ReturnRule.STATUS)


def test_deep_nesting_is_malformed_not_a_crash() -> None:
    for text in ("[" * 100_000, "{" * 50_000, '{"a":' * 50_000 + "1" + "}" * 50_000):
        parsed = parse(text, max_tokens=10**9)
        assert not parsed.valid


def test_a_two_megabyte_line_is_refused_quickly() -> None:
    for text in ("x" * 2_000_000, "{" * 2_000_000, '{"status": "' + "a" * 2_000_000 + '"}'):
        started = time.perf_counter()
        parsed = parse(text)
        assert time.perf_counter() - started < 1.5
        assert_invalid(parsed, ReturnRule.TOO_LONG)


def test_a_generous_budget_does_not_make_parsing_slow() -> None:
    text = "{" * 60_000  # just under the character cap, every brace a candidate
    started = time.perf_counter()
    parsed = parse(text, max_tokens=10**9)
    assert time.perf_counter() - started < 1.5
    assert not parsed.valid


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(),
        st.text(alphabet='{}[]":,` \njsonPASStatusumry\\', max_size=200),
        json_values.map(json.dumps),
        st.builds(
            lambda status, summary, prefix, suffix: (
                prefix + json.dumps({"status": status, "summary": summary}) + suffix
            ),
            st.sampled_from(["PASS", "READY_FOR_QA", "BAZINGA", INVALID_RETURN]) | st.text(),
            st.lists(st.text(), max_size=5),
            st.sampled_from(["", "```json\n", "x ", "{"]),
            st.sampled_from(["", "\n```", " y", "}"]),
        ),
    ),
    role=st.sampled_from(list(AgentRole)),
    budget=st.integers(min_value=1, max_value=5_000),
)
def test_hostile_input_never_raises_and_always_answers_three_lines(
    text: str, role: AgentRole, budget: int
) -> None:
    parsed = parse_return(text, role, max_tokens=budget, conversation_id=CONVERSATION)
    assert isinstance(parsed, ParsedReturn)
    assert len(parsed.answer.summary) == 3
    if parsed.valid:
        assert parsed.answer.status in ROLE_STATUSES[role]
        assert parsed.tokens <= budget
        for line in parsed.answer.summary:
            assert line.strip()
            assert line.splitlines() == [line]
    else:
        assert parsed.answer.status == INVALID_RETURN
        assert parsed.answer.summary[2].endswith(CONVERSATION)
        for line in parsed.answer.summary:
            assert one_printable_line(line)
        json.dumps(parsed.answer.payload()).encode("utf-8")  # safe to send on


def test_a_byte_order_mark_before_the_json_is_not_text_around_it() -> None:
    assert parse("\ufeff" + MINIMAL).valid


def test_plain_prose_says_there_is_no_json_object() -> None:
    parsed = parse("Implemented it; all tests pass.")
    assert_invalid(parsed, ReturnRule.NOT_JSON)
    assert "no JSON object" in parsed.reason


def test_the_found_line_names_a_status_the_role_may_return() -> None:
    verbose = parse(f"All done!\n{MINIMAL}")
    assert "status READY_FOR_QA" in verbose.answer.summary[1]
    two = parse(f"{MINIMAL}\n" + json.dumps({"status": "BLOCKED", "summary": LINES}))
    assert "READY_FOR_QA, BLOCKED" in two.answer.summary[1]
    foreign = parse("Done.\n" + json.dumps({"status": "\x1b]0;pwned\x07", "summary": LINES}))
    assert "status" not in foreign.answer.summary[1]


def test_a_message_over_the_character_cap_says_so_whatever_the_budget() -> None:
    text = "word " * 20_000
    parsed = parse(text, max_tokens=10**9)
    assert_invalid(parsed, ReturnRule.TOO_LONG)
    assert "characters" in parsed.reason
