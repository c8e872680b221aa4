"""Conversation id shapes: what each agent mints, and nothing an argv could misread."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import ids
from core.errors import InvalidId

CLAUDE_SESSION = "cb2e607c-c758-415a-8b45-c49e4631906a"  # from tests/fixtures/realdata
CODEX_THREAD = "019c8a53-a0dd-7130-bcd7-95445d84846a"  # a UUID v7
SUBAGENTS = ("2b93909d", "a2271d1", "a36efb2a1231c41e2")  # 8, 7 and 17 hex digits, all seen

HOSTILE = (
    "-p",
    "--dangerously-skip-permissions",
    "--dangerously-bypass-approvals-and-sandbox",
    "--last",
    "../../etc/passwd",
    "a/b",
    "..",
    "a b",
    "x\ny",
    "*",
    "",
    CLAUDE_SESSION + "\n",
    " " + CLAUDE_SESSION,
    "{" + CLAUDE_SESSION + "}",
    "urn:uuid:" + CLAUDE_SESSION,
)


def test_each_agent_accepts_the_ids_it_mints() -> None:
    assert ids.is_valid_id(ids.CLAUDE_CODE, CLAUDE_SESSION)
    assert all(ids.is_valid_id(ids.CLAUDE_CODE, agent) for agent in SUBAGENTS)
    assert ids.is_valid_id(ids.CODEX, CODEX_THREAD)
    assert ids.is_valid_id(ids.DELEGATE, CLAUDE_SESSION)
    assert not ids.is_valid_id(ids.CODEX, SUBAGENTS[0])  # a Codex thread is always a UUID
    assert not ids.is_valid_id("unknown-agent", CLAUDE_SESSION)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_option_path_and_glob_shaped_ids_are_invalid_everywhere(hostile: str) -> None:
    for source in (ids.CLAUDE_CODE, ids.CODEX, ids.DELEGATE):
        assert not ids.is_valid_id(source, hostile)
        with pytest.raises(InvalidId) as caught:
            ids.validate_id(source, hostile)
        assert caught.value.code == "invalid_id"
        assert repr(hostile) in caught.value.message


def test_runners_that_keep_ids_to_themselves_check_nothing() -> None:
    assert ids.validate_for_runner("scripted", "c1") == "c1"
    assert ids.validate_for_runner("openai_compat", "-p") == "-p"
    with pytest.raises(InvalidId):
        ids.validate_for_runner("claude_code", "-p")
    with pytest.raises(InvalidId):
        ids.validate_for_runner("codex", "--last")


@pytest.mark.parametrize("hostile", ["../x", "*", "-p", "a b"])
def test_a_transcript_is_looked_up_only_under_a_valid_id(tmp_path: Path, hostile: str) -> None:
    from core.importing.importer import find_transcript

    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    (project / f"{CLAUDE_SESSION}.jsonl").write_text("{}\n")
    (tmp_path / "projects" / "x.jsonl").write_text("{}\n")  # what "p/../x" would reach
    assert find_transcript(ids.CLAUDE_CODE, CLAUDE_SESSION, tmp_path) is not None
    assert find_transcript(ids.CLAUDE_CODE, hostile, tmp_path) is None
    assert find_transcript(ids.CODEX, hostile, tmp_path) is None
