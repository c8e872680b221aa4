"""The seed-003 hand-off template: rendering, the agent's request, validation."""

from __future__ import annotations

from datetime import UTC, datetime

from core.documents.handoff_template import (
    HANDOFF_SECTIONS,
    NOTHING_RECORDED,
    HandoffHeader,
    extract_handoff,
    handoff_request,
    parse_handoff,
    render_handoff,
    validate_handoff,
)

HEADER = HandoffHeader(
    created=datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC),
    previous_instance="0f3a9c1e-1111-2222-3333-444455556666",
    used_tokens=140_000,
    limit_tokens=200_000,
    project="/home/dev/consilio",
    branch="feature/auth",
    previous_handoff=".delegate/handoffs/handoff-2026-01-20-141523.md",
    chain_position=2,
)

FILLED = {
    "Current Task": "Implementing JWT authentication for the API.",
    "Progress Summary": "### Completed\n- middleware\n\n### In Progress\n- tests\n\n"
    "### Pending\n- docs",
    "Active Subagents": "- None",
    "Recent Decisions": "1. JWT over sessions: the API is stateless.",
    "Files Modified": "- src/middleware/auth.ts (new)",
    "Next Steps": "1. Finish the endpoint tests.",
    "Important Context": "- The user asked for JWT, not OAuth.",
    "Links": "- Plan: docs/auth-plan.md",
    "Instructions for New Instance": "1. Read this document.\n2. Continue from Next Steps.",
}


def test_sections_follow_the_seed_order() -> None:
    assert HANDOFF_SECTIONS == (
        "Current Task",
        "Progress Summary",
        "Active Subagents",
        "Recent Decisions",
        "Files Modified",
        "Next Steps",
        "Important Context",
        "Links",
        "Instructions for New Instance",
    )


def test_a_rendered_document_carries_the_metadata_and_every_section_in_order() -> None:
    text = render_handoff(HEADER, FILLED)
    assert text.startswith("# Context Handoff\n")
    assert "**Created**: 2026-01-21 14:30:45 UTC" in text
    assert "**Previous Instance**: 0f3a9c1e-1111-2222-3333-444455556666" in text
    assert "**Context Usage**: 140,000 / 200,000 tokens (70%)" in text
    assert "**Project**: /home/dev/consilio" in text
    assert "**Branch**: feature/auth" in text
    assert "handoff #2 in its chain" in text
    assert "handoff-2026-01-20-141523.md" in text
    positions = [text.index(f"\n## {name}\n") for name in HANDOFF_SECTIONS]
    assert positions == sorted(positions)
    assert validate_handoff(text) == []


def test_an_empty_section_says_so_rather_than_inventing() -> None:
    text = render_handoff(HEADER, {"Current Task": "Fix the login bug."})
    assert text.count(NOTHING_RECORDED) == len(HANDOFF_SECTIONS) - 1
    assert parse_handoff(text)["Current Task"] == "Fix the login bug."


def test_the_first_of_a_chain_names_no_previous_handoff() -> None:
    first = HandoffHeader(
        created=HEADER.created,
        previous_instance="abc",
        used_tokens=0,
        limit_tokens=0,
        project="/p",
    )
    text = render_handoff(first, FILLED)
    assert "**Previous Handoff**: none (the first of its chain)" in text
    assert "**Context Usage**: unknown" in text
    assert validate_handoff(text) == []


def test_the_request_to_an_agent_holds_the_template_and_asks_for_the_document_only() -> None:
    prompt = handoff_request(HEADER)
    assert "70%" in prompt
    assert "# Context Handoff" in prompt
    for name in HANDOFF_SECTIONS:
        assert f"## {name}" in prompt
    # The template itself is not a valid hand-off: its placeholders must be replaced.
    template = extract_handoff(prompt)
    assert template is not None
    problems = validate_handoff(template)
    assert any("placeholder" in p for p in problems)


def test_validation_names_missing_and_misordered_sections() -> None:
    text = render_handoff(HEADER, FILLED)
    without = text.replace("## Next Steps\n", "## Later\n")
    assert any("Next Steps" in p and "missing" in p for p in validate_handoff(without))
    swapped = (
        text.replace("## Links\n", "## TMP\n")
        .replace("## Current Task\n", "## Links\n")
        .replace("## TMP\n", "## Current Task\n")
    )
    assert any("order" in p for p in validate_handoff(swapped))
    assert any("title" in p for p in validate_handoff("no title here"))


def test_validation_wants_the_three_parts_of_progress() -> None:
    sections = dict(FILLED, **{"Progress Summary": "- did things"})
    problems = validate_handoff(render_handoff(HEADER, sections))
    assert any("Completed" in p for p in problems)


def test_validation_refuses_a_secret() -> None:
    sections = dict(
        FILLED,
        **{
            "Important Context": "ANTHROPIC_API_KEY="
            + "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
        },
    )
    problems = validate_handoff(render_handoff(HEADER, sections))
    assert any("secret" in p for p in problems)


def test_an_agent_reply_is_cut_out_of_prose_and_fences() -> None:
    document = render_handoff(HEADER, FILLED)
    reply = f"Sure, here it is:\n\n```markdown\n{document}```\n\nLet me know."
    extracted = extract_handoff(reply)
    assert extracted is not None
    assert validate_handoff(extracted) == []
    assert parse_handoff(extracted)["Links"] == "- Plan: docs/auth-plan.md"
    assert extract_handoff("I could not write it.") is None
