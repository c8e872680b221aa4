"""Capsule Markdown: parsed into the model, rendered back byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from capsule_texts import HAND_WRITTEN, SEED_EXAMPLE
from hypothesis import given
from hypothesis import strategies as st

from core.capsules.markdown import CapsuleSyntaxError, parse_capsule, render_capsule, with_front
from core.capsules.model import (
    MINI_BUDGET,
    MINI_SECTIONS,
    SECTIONS,
    Capsule,
    FrontMatter,
    Reference,
    Section,
)
from core.capsules.template import capsule_template
from core.capsules.validate import validate_capsule
from core.errors import DelegateError

FRONT = FrontMatter(
    branch="feature/auth",
    source_session="0f3a9c1e",
    created_at=datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC),
    primary_objective='JWT auth: "stateless", tested',
    references=(Reference(path="src/auth.ts", blob="3b18e512dba79e4c8300dd08aeb37f8e728b8dad"),),
)


@pytest.mark.parametrize("text", [SEED_EXAMPLE, HAND_WRITTEN], ids=["seed", "hand_written"])
def test_round_trip_is_byte_stable(text: str) -> None:
    assert render_capsule(parse_capsule(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        HAND_WRITTEN.replace("\n", "\r\n"),  # Windows line ends
        HAND_WRITTEN.rstrip("\n"),  # no final newline
        HAND_WRITTEN.rstrip("\n") + "\n\n\n",  # trailing blank lines
        "---\nbranch: x\n---",  # nothing after the front matter
        "---\n---\n# Mission Snapshot",  # empty front matter, a heading at the very end
        "---  \nbranch:   'it''s'   # a comment\n---\t\nprose only\n",
        "\ufeff" + HAND_WRITTEN,  # a byte-order mark
        HAND_WRITTEN.replace("review;", "review;\u2028\x0c\r"),  # breaks that are not lines
    ],
)
def test_round_trip_keeps_odd_bytes(text: str) -> None:
    assert render_capsule(parse_capsule(text)) == text


_PIECES = st.sampled_from(
    [
        "\u2028",
        "\r",
        "\ufeff",
        "# ",
        "## ",
        "#",
        "-",
        " ",
        "\n",
        "\r\n",
        "`",
        "```",
        "~~~",
        ":",
        "---",
        "a",
        "Mission Snapshot",
        "key: v",
        "<!--",
        "-->",
        "\t",
        "é",
        '"',
        "'",
    ]
)


@given(st.lists(_PIECES, max_size=40).map("".join), st.lists(_PIECES, max_size=40).map("".join))
def test_round_trip_any_text_parse_accepts(front: str, body: str) -> None:
    text = f"---\n{front.replace('---', '--')}\n---\n{body}"
    assert render_capsule(parse_capsule(text)) == text


def test_parse_reads_the_seed_envelope() -> None:
    capsule = parse_capsule(SEED_EXAMPLE)
    assert capsule.front == FrontMatter(
        branch="feature/context-capsule-design",
        source_session="20251023-171812-20251023171813-bc1df3",
        created_at=datetime(2025, 10, 23, 18, 5, tzinfo=UTC),
        primary_objective="Design context capsule workflow for subagents",
        token_budget=1200,
        version="0.1",
    )
    assert [s.title for s in capsule.sections] == list(SECTIONS[:-1])
    assert capsule.sections[0].line == 9
    assert capsule.section("key decisions & RATIONALE") == capsule.sections[1]
    assert capsule.sections[1].body == "1. ...\n\n"


def test_parse_keeps_extra_prose_and_references() -> None:
    capsule = parse_capsule(HAND_WRITTEN)
    assert capsule.front.references == (
        Reference(path="src/middleware/auth.ts", blob="3b18e512dba79e4c8300dd08aeb37f8e728b8dad"),
        Reference(path="docs/auth-plan.md"),
    )
    assert capsule.preamble == "Written by hand after the 14:00 review; read the plan first.\n\n"
    titles = [s.title for s in capsule.sections]
    assert titles == [*SECTIONS, "Notes for the reviewer"]  # the fenced `# ...` is no heading
    decisions = capsule.section("Key Decisions & Rationale")
    assert decisions is not None
    assert "## Rejected\n- Cookie sessions" in decisions.body
    knowledge = capsule.section("Knowledge Base")
    assert knowledge is not None
    assert "# this is a shell comment" in knowledge.body
    assert capsule.body == HAND_WRITTEN.split("---\n", 2)[2]


def test_parse_forgives_bad_values_and_unknown_keys() -> None:
    text = (
        "---\nbranch: x\nowner: me\ntoken_budget: lots\ntemplate: mini\n---\n# Mission Snapshot\n"
    )
    capsule = parse_capsule(text)
    assert capsule.front.branch == "x"
    assert capsule.front.template == "mini"
    assert capsule.front.token_budget == MINI_BUDGET  # the bad value: the template's default
    assert render_capsule(capsule) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Mission Snapshot\n- no front matter\n", "starts with a front-matter block"),
        ("", "starts with a front-matter block"),
        ("---\nbranch: x\n# Mission Snapshot\n", "never closed"),
    ],
)
def test_parse_refuses_text_without_front_matter(text: str, message: str) -> None:
    with pytest.raises(CapsuleSyntaxError) as raised:
        parse_capsule(text)
    assert isinstance(raised.value, DelegateError)
    assert raised.value.code == "capsule_syntax"
    assert message in raised.value.message
    assert [(p.line, p.code) for p in raised.value.problems] == [(1, "front_matter_missing")]


def test_a_capsule_built_in_code_renders_canonically() -> None:
    capsule = Capsule(
        front=FRONT,
        sections=(
            Section(title="Mission Snapshot", body="- ship it"),
            Section(title="Pending Actions", body="- [ ] tests\n\n"),
        ),
    )
    text = render_capsule(capsule)
    assert text == (
        "---\n"
        "branch: feature/auth\n"
        "source_session: 0f3a9c1e\n"
        "created_at: 2026-01-21T14:30:45Z\n"
        'primary_objective: "JWT auth: \\"stateless\\", tested"\n'
        "token_budget: 1200\n"
        "version: 0.1\n"
        "template: full\n"
        "references:\n"
        "  - path: src/auth.ts\n"
        "    blob: 3b18e512dba79e4c8300dd08aeb37f8e728b8dad\n"
        "---\n"
        "# Mission Snapshot\n"
        "- ship it\n"
        "# Pending Actions\n"
        "- [ ] tests\n\n"
    )
    reparsed = parse_capsule(text)
    assert reparsed.front == FRONT
    assert [(s.title, s.body) for s in reparsed.sections] == [
        ("Mission Snapshot", "- ship it\n"),
        ("Pending Actions", "- [ ] tests\n\n"),
    ]


@pytest.mark.parametrize(
    "value",
    ["feature/x: y", "#12", "- dash", "it's", 'say "hi"', " padded", "ends:", "tab\there"],
)
def test_front_matter_values_that_need_quotes_survive(value: str) -> None:
    front = FRONT.model_copy(update={"branch": "b", "source_session": value})
    text = render_capsule(Capsule(front=front, sections=()))
    assert parse_capsule(text).front.source_session == value


def test_mini_front_matter_defaults_to_the_mini_budget() -> None:
    front = FrontMatter(
        branch="b",
        source_session="s",
        created_at=FRONT.created_at,
        primary_objective="o",
        template="mini",
    )
    assert front.token_budget == MINI_BUDGET
    assert front.outline == MINI_SECTIONS


@pytest.mark.parametrize("template", ["full", "mini"])
def test_the_template_parses_to_its_outline(template: str) -> None:
    front = FRONT.model_copy(update={"template": template})
    text = capsule_template(front)
    capsule = parse_capsule(text)
    assert capsule.front == front
    assert tuple(s.title for s in capsule.sections) == front.outline
    assert all(s.body.startswith("<!-- ") for s in capsule.sections)
    assert render_capsule(capsule) == text


BLOB = "0123456789abcdef0123456789abcdef01234567"


def test_with_front_rewrites_only_the_keys_that_changed() -> None:
    capsule = parse_capsule(HAND_WRITTEN)
    refs = (capsule.front.references[0], Reference(path="docs/auth-plan.md", blob=BLOB))
    front = capsule.front.model_copy(update={"references": refs, "token_budget": 900})
    text = render_capsule(with_front(capsule, front))
    assert text == HAND_WRITTEN.replace("token_budget: 1200", "token_budget: 900").replace(
        "  - path: docs/auth-plan.md\n", f"  - path: docs/auth-plan.md\n    blob: {BLOB}\n"
    )
    assert parse_capsule(text).front == front


def test_with_front_keeps_what_it_does_not_change_as_written() -> None:
    """A key the agent left out stays out (validation still says so), an unknown key and
    a comment stay, and a key it lacked is added before the closing delimiter."""
    text = (
        "---\r\nbranch: x   # the work\r\nowner: me\r\ntoken_budget: 300\r\n---\r\n"
        "# Mission Snapshot\r\n"
    )
    capsule = parse_capsule(text)
    front = capsule.front.model_copy(update={"references": (Reference(path="a.py"),)})
    patched = render_capsule(with_front(capsule, front))
    assert patched == (
        "---\r\nbranch: x   # the work\r\nowner: me\r\ntoken_budget: 300\r\n"
        "references:\r\n  - path: a.py\r\n---\r\n# Mission Snapshot\r\n"
    )
    codes = {p.code for p in validate_capsule(patched)}
    assert "front_matter_missing_key" in codes  # created_at, ... were not invented


def test_with_front_on_a_built_capsule_renders_canonically() -> None:
    built = Capsule(front=FRONT, sections=())
    front = FRONT.model_copy(update={"branch": "main"})
    assert render_capsule(with_front(built, front)) == render_capsule(
        Capsule(front=front, sections=())
    )
