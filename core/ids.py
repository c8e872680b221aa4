"""The shape of every conversation id delegate accepts, per agent.

Ids come from files other programs write (a transcript's name, its
``sessionId``, a rollout's ``session_meta.id``) and end up in an agent CLI's
argv (``claude --resume=ID``, ``codex exec resume -- ID``) and in a glob
(``rollout-*-ID.jsonl``). An id that is not the shape its agent mints is data
nobody should act on: the importers skip it (counted in the import report) and
a launch refuses it with :class:`~core.errors.InvalidId` before any process
starts. Every accepted shape is hex digits and hyphens, starting with a
digit or letter: never an option, a space, a newline, a ``/``, a ``..`` or a
glob character.

Stdlib only: the importer's worker processes import it.
"""

from __future__ import annotations

import re

from core.errors import InvalidId

CLAUDE_CODE = "claude-code"
CODEX = "codex"
DELEGATE = "delegate"

# 8-4-4-4-12 hex digits: the canonical text form only (uuid.UUID() also takes
# braces, "urn:uuid:" and no hyphens, none of which any agent writes).
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
# A Claude Code sub-agent's ``agentId``: the hex after ``agent-`` in its file
# name (8 hex digits up to 2.1.1, ``a`` + 16 since, 7 in some).
_CLAUDE_AGENT = re.compile(r"[0-9a-f]{1,64}")

_SHAPES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    # A session's ``sessionId`` (delegate's own launches pass a UUID too).
    CLAUDE_CODE: ((_UUID, "a UUID"), (_CLAUDE_AGENT, "a sub-agent's hex id")),
    # A thread id (UUID v7 today, v4 in older rollouts); delegate's launch id
    # until ``thread.started`` names the thread.
    CODEX: ((_UUID, "a UUID"),),
    DELEGATE: ((_UUID, "a UUID"),),
}

# The id shape each runner hands to its agent; runners absent here keep ids
# in our store only (scripted, openai_compat), so any stored id will do.
RUNNER_SOURCES = {"claude_code": CLAUDE_CODE, "codex": CODEX}


def is_uuid(text: str) -> bool:
    """Whether ``text`` is a UUID in its canonical form (what a resumable session id is)."""
    return _UUID.fullmatch(text) is not None


def is_valid_id(source: str, conversation_id: str) -> bool:
    """Whether ``conversation_id`` has a shape ``source``'s agent mints."""
    shapes = _SHAPES.get(source, ())
    return any(pattern.fullmatch(conversation_id) for pattern, _ in shapes)


def validate_id(source: str, conversation_id: str) -> str:
    """``conversation_id`` unchanged, or :class:`InvalidId` saying what was expected."""
    if not is_valid_id(source, conversation_id):
        expected = " or ".join(what for _, what in _SHAPES.get(source, ())) or "nothing"
        raise InvalidId(
            f"conversation id {conversation_id!r} is not a {source} id (expected {expected}); "
            "it was not imported or launched by this agent, so it cannot be resumed"
        )
    return conversation_id


def validate_for_runner(runner: str, conversation_id: str) -> str:
    """Check an id before a runner hands it to its agent (a no-op for runners that do not)."""
    source = RUNNER_SOURCES.get(runner)
    return conversation_id if source is None else validate_id(source, conversation_id)
