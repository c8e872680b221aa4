"""Taking the capsule out of an agent's answer: bare, after prose, fenced, with fences inside."""

from __future__ import annotations

from core.drafting.capsule_extract import extract_capsule

CAPSULE = """---
branch: feature/auth
source_session: s-1
created_at: 2026-11-23T21:00:00Z
primary_objective: "Ship the login flow"
token_budget: 1200
version: 0.1
---
# Mission Snapshot
- **User intent:** log in
"""


def test_a_bare_answer_is_the_capsule() -> None:
    assert extract_capsule(CAPSULE) == CAPSULE


def test_prose_before_it_is_dropped_and_windows_line_ends_normalised() -> None:
    reply = "Here is the capsule you asked for.\r\n\r\n" + CAPSULE.replace("\n", "\r\n")
    assert extract_capsule(reply) == CAPSULE


def test_a_fenced_capsule_ends_where_its_fence_closes() -> None:
    reply = f"Sure:\n\n```markdown\n{CAPSULE}```\n\nLet me know if anything is missing.\n"
    assert extract_capsule(reply) == CAPSULE


def test_code_fences_inside_a_fenced_capsule_are_kept() -> None:
    body = CAPSULE + "\n# Knowledge Base\n```python\nlogin()\n```\n- more\n"
    reply = f"```md\n{body}```\ntrailing words\n"
    assert extract_capsule(reply) == body


def test_a_longer_outer_fence_is_honoured() -> None:
    body = CAPSULE + "```\nplain block\n```\n"
    assert extract_capsule(f"````markdown\n{body}````\n") == body


def test_a_thematic_break_in_prose_is_not_front_matter() -> None:
    assert extract_capsule("one\n---\ntwo\n") is None
    assert extract_capsule("---\nbranch: x\nno closing line\n") is None
    assert extract_capsule("I could not write it: I have no context.") is None
    assert extract_capsule("") is None


def test_the_first_real_front_matter_wins_after_a_decoy_rule() -> None:
    reply = f"Notes\n---\n\n{CAPSULE}"
    assert extract_capsule(reply) == CAPSULE
