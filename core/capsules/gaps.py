"""Capsule gaps for the main agent (seed 000): which session a gap is told to, and the
block its next prompt carries.

A sub-agent launched with a capsule writes ``Capsule Gap: ...`` lines when the capsule
lacked something it needed (``core.documents.prompt.capsule_gaps`` finds them). The
main agent is the capsule's source session when that names a session of ours, else the
reporter's parent; delegate puts the gaps into the next prompt it sends that session,
once each (the orchestrator keeps them as ``capsule_gap`` history events).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.events import CapsuleGap

GAPS_HEADING = "[delegate] Capsule gaps reported by sub-agents (what their capsule lacked):"


def gap_line(gap: CapsuleGap) -> str:
    """``- sub-agent ID (agent): the note`` — one line (a note is one line already)."""
    return f"- sub-agent {gap.conversation_id} ({gap.agent_id}): {gap.note}"


def with_gaps(prompt: str, gaps: Sequence[CapsuleGap]) -> str:
    """The prompt a main session gets next: the gaps reported to it, oldest first, then
    the prompt (unchanged when there are none)."""
    if not gaps:
        return prompt
    lines = "\n".join(gap_line(g) for g in gaps)
    return f"{GAPS_HEADING}\n{lines}\n\n{prompt}"
