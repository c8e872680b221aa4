"""Capsule validation: every rule, with the line a person must fix."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from capsule_texts import HAND_WRITTEN, SEED_EXAMPLE
from hypothesis import given
from hypothesis import strategies as st

from core.capsules.markdown import parse_capsule
from core.capsules.model import MINI_BUDGET, FrontMatter
from core.capsules.template import capsule_template
from core.capsules.validate import body_tokens, validate_capsule
from core.tokens import count_tokens

FRONT = FrontMatter(
    branch="feature/auth",
    source_session="0f3a9c1e",
    created_at=datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC),
    primary_objective="JWT authentication for the API",
)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` on which ``needle`` starts."""
    return text[: text.index(needle)].count("\n") + 1


def found(text: str, **options: int) -> list[tuple[int, str]]:
    return [(p.line, p.code) for p in validate_capsule(text, **options)]


def test_a_hand_written_capsule_with_extra_prose_is_clean() -> None:
    assert validate_capsule(HAND_WRITTEN) == []


@pytest.mark.parametrize("template", ["full", "mini"])
def test_the_template_validates_clean(template: str) -> None:
    front = FRONT.model_copy(update={"template": template})
    assert validate_capsule(capsule_template(front)) == []


def test_the_seed_example_misses_exploratory_threads_and_a_highlight_reference() -> None:
    last = SEED_EXAMPLE.count("\n")
    assert found(SEED_EXAMPLE) == [(last, "highlight_unreferenced"), (last, "section_missing")]


def test_exploratory_threads_may_live_inside_the_highlights() -> None:
    text = SEED_EXAMPLE.replace(
        "conclusions.\n", "conclusions (2025-10-23).\n\n## Exploratory Threads\n- idea\n"
    )
    assert validate_capsule(text) == []


# --- front matter --------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["# Mission Snapshot\n- no front matter\n", "---\nbranch: x\n# Mission Snapshot\n"]
)
def test_front_matter_missing_is_line_1_and_the_sections_are_still_checked(text: str) -> None:
    problems = found(text)
    assert problems[0] == (1, "front_matter_missing")
    assert (len(text.splitlines()), "section_missing") in problems


def test_front_matter_unknown_key() -> None:
    text = HAND_WRITTEN.replace("version: 0.1\n", "version: 0.1\nowner: me\n")
    assert found(text) == [(line_of(text, "owner:"), "front_matter_unknown_key")]


def test_reference_unknown_key() -> None:
    text = HAND_WRITTEN.replace(
        "  - path: docs/auth-plan.md\n", "  - path: docs/a.md\n    sha: 1\n"
    )
    assert found(text) == [(line_of(text, "    sha:"), "front_matter_unknown_key")]


@pytest.mark.parametrize(
    "key",
    ["branch", "source_session", "created_at", "primary_objective", "token_budget", "version"],
)
def test_front_matter_missing_key_points_at_the_closing_delimiter(key: str) -> None:
    lines = [line for line in HAND_WRITTEN.splitlines(keepends=True) if not line.startswith(key)]
    text = "".join(lines)
    closing = line_of(text, "---\nWritten")
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [(closing, "front_matter_missing_key")]
    assert f"`{key}: " in problems[0].message


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("token_budget: 1200", "token_budget: lots", "token_budget"),
        ("token_budget: 1200", "token_budget: 0", "token_budget"),
        ("created_at: 2026-01-21T14:30:45Z", "created_at: yesterday", "created_at"),
        ("created_at: 2026-01-21T14:30:45Z", "created_at: 2026-01-21T14:30:45", "created_at"),
        ("version: 0.1", "version: one", "version"),
        ("version: 0.1", "version: 0.1\ntemplate: huge", "template"),
        ("branch: feature/auth", "branch: my feature", "branch"),
        ("branch: feature/auth", "branch:", "branch"),
        ('primary_objective: "JWT', 'primary_objective: "JWT\\', "primary_objective"),
        ("version: 0.1", "version: 0.1\nversion: 0.2", "version: 0.2"),
        ("version: 0.1", "version: 0.1\njust words", "just words"),
        ("version: 0.1", "version:\n  - 0.1", "version"),
        ("  - path: docs/auth-plan.md", "  - path: ../secrets.txt", "  - path: ../"),
        ("  - path: docs/auth-plan.md", "  - path: /etc/passwd", "  - path: /etc"),
        ("  - path: docs/auth-plan.md", "  - path: docs/a.md\n    blob: not-hex", "    blob: not"),
        ("  - path: docs/auth-plan.md", "  - blob: 3b18e512dba79e4c8300dd08aeb37f8e", "  - blob"),
        ("references:\n", "references: docs/a.md\n", "references"),
    ],
)
def test_front_matter_bad_value_on_its_line(old: str, new: str, where: str) -> None:
    text = HAND_WRITTEN.replace(old, new, 1)
    assert text != HAND_WRITTEN
    problems = found(text)
    assert problems == [(line_of(text, "\n" + where) + 1, "front_matter_bad_value")]


def test_a_bare_reference_path_is_accepted() -> None:
    text = HAND_WRITTEN.replace("  - path: docs/auth-plan.md", "  - docs/auth-plan.md")
    assert validate_capsule(text) == []
    assert parse_capsule(text).front.references[1].path == "docs/auth-plan.md"


# --- the outline -----------------------------------------------------------------


def test_section_missing_points_where_it_belongs() -> None:
    text = HAND_WRITTEN.replace(
        "# Risks & Watchpoints\n- Clock skew between services: allow 30 s leeway; watch the "
        "401 rate.\n\n",
        "",
    )
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [
        (line_of(text, "# Transcript Highlights"), "section_missing")
    ]
    assert "`# Risks & Watchpoints`" in problems[0].message
    assert "after `# Knowledge Base`" in problems[0].message


@pytest.mark.parametrize(
    ("title", "alike"),
    [
        ("# Key Decisions & Rationale", "# Key Decisions and Rationale"),
        ("# Risks & Watchpoints", "# Risk & Watchpoint"),
        ("# Transcript Highlights", "# Transcript Hilights"),
    ],
)
def test_section_missing_points_at_a_look_alike_heading(title: str, alike: str) -> None:
    text = HAND_WRITTEN.replace(title + "\n", alike + "\n")
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [(line_of(text, alike), "section_missing")]
    assert f"`{alike}` looks like it" in problems[0].message


def test_section_missing_at_the_end_points_at_the_last_line() -> None:
    text = HAND_WRITTEN[: HAND_WRITTEN.index("# Exploratory")]
    assert found(text) == [(len(text.splitlines()), "section_missing")]


def test_section_order_names_the_section_to_move() -> None:
    pending = (
        "# Pending Actions\n- [ ] Finish the endpoint tests (sub-agent, now)\n"
        "- [ ] Document the refresh flow (main, after tests)\n\n"
    )
    text = HAND_WRITTEN.replace(pending, "").replace(
        "# Transcript Highlights", pending + "# Transcript Highlights"
    )
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [
        (line_of(text, "# Pending Actions"), "section_order")
    ]
    assert "after `# Active Workstreams`" in problems[0].message


def test_section_order_when_the_first_section_moves_last() -> None:
    mission = HAND_WRITTEN[HAND_WRITTEN.index("# Mission") : HAND_WRITTEN.index("# Key")]
    text = HAND_WRITTEN.replace(mission, "").replace("# Notes for", mission + "# Notes for")
    assert found(text) == [(line_of(text, "# Mission Snapshot"), "section_order")]


def test_a_section_given_twice() -> None:
    text = HAND_WRITTEN + "\n# Pending Actions\n- [ ] one more\n"
    assert found(text) == [(line_of(text, "# Pending Actions\n- [ ] one"), "section_order")]


def test_lines_are_counted_at_newlines_only() -> None:
    """``path:line`` as git and editors count it: U+2028, form feeds and a lone CR
    inside a line do not start another."""
    text = HAND_WRITTEN.replace("review;", "review;\u2028\x0c\r").replace(
        HIGHLIGHTS, "- cites nothing\n"
    )
    assert found(text) == [(line_of(text, "- cites nothing"), "highlight_unreferenced")]
    assert parse_capsule(text).sections[0].line == line_of(text, "# Mission Snapshot")


def test_a_byte_order_mark_before_the_front_matter_is_fine() -> None:
    assert validate_capsule("\ufeff" + HAND_WRITTEN) == []


def test_headings_match_whatever_their_case_and_spacing() -> None:
    text = HAND_WRITTEN.replace("# Knowledge Base", "#   knowledge   BASE  ")
    assert validate_capsule(text) == []


def test_a_mini_capsule_needs_only_its_three_sections() -> None:
    front = FRONT.model_copy(update={"template": "mini", "token_budget": MINI_BUDGET})
    text = capsule_template(front).replace("# Knowledge Base\n", "# Knowledge Base\n- a.py\n")
    assert validate_capsule(text) == []
    dropped = text.replace("# Pending Actions\n", "# Other\n")
    assert found(dropped) == [(line_of(dropped, "# Knowledge Base"), "section_missing")]


# --- transcript highlights ---------------------------------------------------------


HIGHLIGHTS = "- commit 9f2c1ab added the middleware.\n"


def test_highlights_too_many_points_at_the_sixth() -> None:
    extra = "".join(f"- 2026-01-2{n}: point {n}\n" for n in range(3))
    text = HAND_WRITTEN.replace(HIGHLIGHTS, HIGHLIGHTS + extra)
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [
        (line_of(text, "- 2026-01-22: point 2"), "highlights_too_many")
    ]
    assert "6 transcript highlights" in problems[0].message


def test_nested_bullets_and_comments_are_not_highlights() -> None:
    nested = "".join(f"  - detail {n} at 10:0{n}\n" for n in range(6))
    text = HAND_WRITTEN.replace(HIGHLIGHTS, HIGHLIGHTS + nested + "<!-- - 1\n- 2\n- 3 -->\n")
    assert validate_capsule(text) == []


@pytest.mark.parametrize(
    "cited",
    [
        "- 2026-01-21 the user chose JWT",
        "- [14:05] the user chose JWT",
        "- the user chose JWT (message 42)",
        "- the user chose JWT, msg_01HXAB",
        "- the user chose JWT, landed in a1b2c3d",
        "- the user chose JWT\n  - see commit 0123456789abcdef0123456789abcdef01234567",
    ],
)
def test_a_highlight_citing_a_timestamp_message_or_commit_is_clean(cited: str) -> None:
    text = HAND_WRITTEN.replace(HIGHLIGHTS, cited + "\n")
    assert validate_capsule(text) == []


@pytest.mark.parametrize(
    "uncited",
    ["- the user chose JWT", "- the message was clear: deadbeef", "* 1. decided on a facade"],
)
def test_highlight_unreferenced(uncited: str) -> None:
    text = HAND_WRITTEN.replace(HIGHLIGHTS, uncited + "\n")
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [
        (line_of(text, uncited), "highlight_unreferenced")
    ]


# --- size -----------------------------------------------------------------------------


def test_body_tokens_counts_the_body_only() -> None:
    body = HAND_WRITTEN.split("---\n", 2)[2]
    assert body_tokens(HAND_WRITTEN) == count_tokens(body)
    assert body_tokens(parse_capsule(HAND_WRITTEN)) == count_tokens(body)
    assert body_tokens("no front matter here") == count_tokens("no front matter here")


def test_over_budget_points_at_the_line_where_the_budget_runs_out() -> None:
    body = HAND_WRITTEN.split("---\n", 2)[2]
    lines = body.splitlines(keepends=True)
    budget = count_tokens("".join(lines[:10]))  # the first 10 lines fit exactly
    text = HAND_WRITTEN.replace("token_budget: 1200", f"token_budget: {budget}")
    problems = validate_capsule(text)
    assert [(p.line, p.code) for p in problems] == [
        (
            line_of(text, lines[10]) if lines[10].strip() else line_of(text, "---\nWritten") + 11,
            "over_budget",
        )
    ]
    assert f"over its token_budget of {budget}" in problems[0].message


def test_over_prompt_ceiling_is_80_percent_of_the_ceiling() -> None:
    used = body_tokens(HAND_WRITTEN)
    ceiling = int(used / 0.8)  # 80% of it is just under the body
    problems = found(HAND_WRITTEN, prompt_ceiling=ceiling)
    assert [code for _, code in problems] == ["over_prompt_ceiling"]
    assert found(HAND_WRITTEN, prompt_ceiling=ceiling + 2) == []


def test_a_big_capsule_reports_both_limits_in_line_order() -> None:
    filler = "".join(
        f"- fact {n}: the endpoint returns 401 when the token expired\n" for n in range(400)
    )
    text = HAND_WRITTEN.replace("# Risks", filler + "\n# Risks")
    codes = found(text)
    assert [code for _, code in codes] == ["over_budget", "over_prompt_ceiling"]
    assert codes[0][0] < codes[1][0]


_PIECES = st.sampled_from(
    [
        "---\n",
        "# Mission Snapshot\n",
        "# Transcript Highlights\n",
        "- ",
        "  - ",
        "\n",
        "```\n",
        "branch: x\n",
        "token_budget: 5\n",
        "references:\n",
        "  - path: ../x\n",
        "a",
        "12:00",
        "#",
    ]
)


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_validate_never_raises_and_points_inside_the_text(text: str) -> None:
    lines = max(1, len(text.splitlines()))
    for problem in validate_capsule(text):
        assert 1 <= problem.line <= lines, problem
        assert problem.message


_BASE = HAND_WRITTEN.split("# Mission", 1)[0]
_LONG = 20_000
_HOSTILE = {
    "heading_of_spaces": f"# x{' ' * _LONG}y\n",
    "subheading_of_spaces": f"# Transcript Highlights\n## x{' ' * _LONG}y\n",
    "msg_then_underscores": f"# Transcript Highlights\n- msg{'_' * _LONG}\n",
    "message_then_spaces": f"# Transcript Highlights\n- message{' ' * _LONG}x\n",
    "hash_runs": f"# {'# ' * _LONG}\n# {'#' * _LONG}\n",
    "fences": "# A\n" + "```\n" * _LONG,
}


@pytest.mark.parametrize("body", _HOSTILE.values(), ids=_HOSTILE.keys())
def test_hostile_lines_take_linear_time(body: str) -> None:
    """Each once took from seconds to hours (a backtracking pattern over a long line)."""
    started = time.perf_counter()
    validate_capsule(_BASE + body)
    assert time.perf_counter() - started < 5.0


def test_a_front_matter_comment_after_a_long_run_of_spaces_is_cut_quickly() -> None:
    text = HAND_WRITTEN.replace("branch: feature/auth", f"branch: feature/auth{' ' * _LONG}# x")
    started = time.perf_counter()
    assert parse_capsule(text).front.branch == "feature/auth"
    assert time.perf_counter() - started < 5.0
