"""How compact returns read (seed 002): a role's return accepted (the seed's display
line) or rejected (which rule, why, its size), and a chain delegate ran, ended."""

from __future__ import annotations

from core.event_text.model import Describer, EventText, Span, Tone, described, plain
from core.event_text.return_words import (
    accepted_line,
    chain_reason,
    one_line,
    role_label,
    rule_words,
    status_style,
)
from core.event_text.words import count, first_line, shown_id, tokens
from core.events import ChainEnded, ReturnAccepted, ReturnRejected


def _group(artifacts_session: str, group_id: str) -> str:
    return f"group {one_line(group_id)} of {one_line(artifacts_session)}"


def _accepted(e: ReturnAccepted, _: str | None) -> EventText:
    """A role's valid compact return: its display line is the news, never cut."""
    shown = accepted_line(e)
    return EventText(
        variant="return_accepted",
        title=f"↩ return · {role_label(e.role)}",
        detail=plain(shown),
        line=f"return of {shown_id(e.conversation_id)} accepted: {shown}",
        record=f"{e.status} · {shown}",
        wraps=True,
    )


def _rejected(e: ReturnRejected, _: str | None) -> EventText:
    """A role's final message broke the protocol: which rule, why, and its size."""
    role, rule = role_label(e.role), rule_words(e.rule)
    group = _group(e.artifacts_session, e.group_id)
    return EventText(
        variant="return_rejected",
        title=f"✗ return rejected · {role}",
        detail=(
            Span(f"{group} · "),
            Span(rule, "bold red"),
            Span(f": {first_line(e.reason or 'no reason given', 160)}"),
            Span(f" · {tokens(e.tokens)} tokens", "dim"),
        ),
        line=(
            f"return of {shown_id(e.conversation_id)} ({role}, {group}) rejected:"
            f" {rule} — {first_line(e.reason, 100)} · {e.tokens:,} tokens"
        ),
        record=(f"{role} of group {e.group_id} · {rule}: {e.reason} · {e.tokens:,} tokens"),
        tone=Tone.FAILED,
        wraps=True,
    )


def _chain_ended(e: ChainEnded, _: str | None) -> EventText:
    """A group's chain run by delegate stopped: where, after how many steps, and why. A
    failure that stopped it reads as one; any other stop short of the end waits on a
    person, as a context warning does."""
    steps, why = count(e.steps, "step"), chain_reason(e.reason)
    group = _group(e.artifacts_session, e.group_id)
    final = one_line(e.final_status)
    if e.reason in ("invalid", "failed"):
        tone = Tone.FAILED
    else:
        tone = Tone.PLAIN if e.reason == "end" else Tone.ATTENTION
    return EventText(
        variant="chain_ended",
        title="✓ chain done" if e.reason == "end" else "■ chain stopped",
        detail=(
            Span(f"{group} · {steps} · "),
            Span(final, status_style(e.final_status)),
            Span(f" · {why}"),
        ),
        line=f"chain of {group} ended after {steps} at {final}: {why}",
        record=f"group {e.group_id} of {e.artifacts_session} · {steps} · {e.final_status} · {why}",
        tone=tone,
    )


DESCRIBERS: dict[str, Describer] = dict(
    [
        described(ReturnAccepted, _accepted),
        described(ReturnRejected, _rejected),
        described(ChainEnded, _chain_ended),
    ]
)
