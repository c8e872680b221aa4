"""The prompt composer: a launch's first prompt from its task and the documents it carries.

Each document goes where its seed puts it. Seed 000 (capsules): the task and scope first,
then a ``## Context Capsule`` block with the capsule's body and the instructions for
consuming it, then the guardrails — so the capsule informs the work without burying the
task or the rules the run must keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CAPSULE_HEADING = "## Context Capsule"

CAPSULE_INSTRUCTIONS = """\
Treat this capsule as authoritative for current context. Verify plan/progress
notebooks align; note discrepancies in your progress log.

- The capsule is a curated snapshot: cross-validate it with the repository's files.
- When finishing work, update plan/progress docs with deltas so future capsules
  remain accurate.
- If critical information seems missing, write a line starting with `Capsule Gap:`
  in your reply, saying what is missing, so the main agent is told."""
"""What seed 000's consumption prompt asks of the agent that receives a capsule."""

GAP_MARKER = "Capsule Gap"
"""What a reply says when the capsule lacked something it needed (seed 000)."""


@dataclass(frozen=True, slots=True)
class InjectedCapsule:
    """A capsule going into a launch's first prompt: its body (front matter removed),
    the registry id it is recorded under and the digest of that body."""

    body: str
    document_id: str
    digest: str
    path: str


def capsule_block(body: str) -> str:
    """The ``## Context Capsule`` block: the body, then how to consume it."""
    return f"{CAPSULE_HEADING}\n\n{body.strip()}\n\n{CAPSULE_INSTRUCTIONS}"


def carried_context(*, capsule: InjectedCapsule | None = None, document: str = "") -> str:
    """What a launch's first prompt carries beside its task: the capsule block, then a
    document it continues from (a hand-off). Stored as context (seed 004): a sub-agent
    of the session inherits it; "" when it carries nothing."""
    parts = []
    if capsule is not None:
        parts.append(capsule_block(capsule.body))
    if document.strip():
        parts.append(document.strip())
    return "\n\n".join(parts)


def compose_launch_prompt(
    task: str,
    *,
    capsule: InjectedCapsule | None = None,
    guardrails: str = "",
    document: str = "",
) -> str:
    """A launch's first prompt: the task, what it carries (the capsule block, a hand-off
    ``document``), the guardrails, in that order.

    Without any of them the task comes back unchanged, so a plain launch sends exactly
    what the person typed.
    """
    parts = [task]
    if carried := carried_context(capsule=capsule, document=document):
        parts.append(carried)
    if guardrails.strip():
        parts.append(guardrails.strip())
    if len(parts) == 1:
        return task
    return "\n\n".join([task.rstrip(), *parts[1:]]) + "\n"


_GAP_LINE = re.compile(
    r"^[ \t]*(?:[-*>][ \t]*)?(?:\*\*|__)?Capsule Gap(?:\*\*|__)?[ \t]*[:\u2014-][ \t]*(?:\*\*|__)?"
    r"[ \t]*(?P<note>\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
MAX_GAP_NOTE = 500


def capsule_gaps(reply: str) -> list[str]:
    """The notes of every ``Capsule Gap:`` line in an agent's reply (seed 000), in order.

    Only a line that starts with the marker counts, so a reply quoting the consumption
    instructions (which mention the marker mid-sentence) reports no gap.
    """
    if GAP_MARKER.lower() not in reply.lower():
        return []
    return [m.group("note").strip()[:MAX_GAP_NOTE] for m in _GAP_LINE.finditer(reply)]
