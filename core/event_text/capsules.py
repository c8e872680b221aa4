"""How capsules read (seed 000): saved or drafted, carried by a launch, a gap a session
reported in one, files it references changed since it was written."""

from __future__ import annotations

from core.event_text.model import Describer, EventText, Span, Tone, described, plain
from core.event_text.words import (
    capsule_label,
    count,
    first_line,
    paths_shown,
    short_id,
    shown_id,
    visible,
)
from core.events import CapsuleGap, CapsuleInjected, CapsuleSaved, CapsuleStale


def _capsule_file(path: str) -> str:
    """``<branch>/<stamp>.md``: where a capsule sits under the repository's capsules."""
    return visible("/".join(path.rsplit("/", 2)[-2:])) or "(no file)"


def _capsule(document_id: str) -> str:
    return f"capsule {shown_id(document_id)}"


def _saved(e: CapsuleSaved, _: str | None) -> EventText:
    """A capsule saved; a draft is the agent's answer, waiting for a person's review."""
    by = {"agent": "by the agent", "person": "by you"}.get(e.producer, e.producer)
    detail = [Span(f"{visible(by)} · {_capsule_file(e.path)}")]
    if e.draft:
        detail.append(Span(" · waiting for your review", "bold yellow"))
    how = "drafted (waiting for review)" if e.draft else "saved"
    # A capsule a person wrote has no session to name.
    who = f" by {shown_id(e.conversation_id)}" if e.conversation_id else ""
    recorded = "drafted, waiting for review" if e.draft else f"saved by {e.producer}"
    return EventText(
        variant="capsule_saved",
        title="◆ capsule drafted" if e.draft else "◆ capsule saved",
        detail=tuple(detail),
        line=f"{_capsule(e.document_id)} {how}{who}: {visible(e.path)}",
        record=f"capsule {short_id(e.document_id)} {recorded} · {e.path}",
    )


def _injected(e: CapsuleInjected, _: str | None) -> EventText:
    """A launch whose first prompt carried a capsule (and what a person accepted)."""
    label = capsule_label(e.document_id, e.digest)
    detail = [Span(label), Span(f" · {_capsule_file(e.path)}")]
    accepted = ", ".join(e.accepted)
    if e.accepted:
        detail.append(Span(f" · accepted: {visible(accepted)}", "yellow"))
    digest = shown_id(e.digest.removeprefix("sha256:"))
    took = visible(f" (accepted {accepted})") if e.accepted else ""
    return EventText(
        variant="capsule_injected",
        title="◆ launched with a capsule",
        detail=tuple(detail),
        line=(
            f"launched {shown_id(e.conversation_id)} with {_capsule(e.document_id)}"
            f" · digest {digest}{took}"
        ),
        record=f"{label} · {e.path}" + (f" · accepted: {accepted}" if e.accepted else ""),
    )


def _gap(e: CapsuleGap, _: str | None) -> EventText:
    """The session said its capsule lacked something it needed."""
    return EventText(
        variant="capsule_gap",
        title="⚠ capsule gap",
        detail=(Span(first_line(e.note or "(no note)", 100), "yellow"),),
        line=(
            f"{shown_id(e.conversation_id)} reports a gap in"
            f" {_capsule(e.document_id)}: {first_line(e.note, 100)}"
        ),
        record=f"gap in capsule {short_id(e.document_id)}: {e.note}",
        tone=Tone.ATTENTION,
    )


def _stale(e: CapsuleStale, _: str | None) -> EventText:
    """Files the capsule references changed since it was written."""
    changed = f"{count(len(e.changed), 'file')} changed"
    return EventText(
        variant="capsule_stale",
        title="⚠ capsule stale",
        detail=plain(f"{_capsule_file(e.path)} · {changed}: {paths_shown(e.changed)}"),
        line=(
            f"{_capsule(e.document_id)} stale: {changed} ({paths_shown(e.changed)}):"
            f" {visible(e.path)}"
        ),
        record=f"{changed} ({', '.join(e.changed)}) · {e.path}",
        tone=Tone.ATTENTION,
    )


DESCRIBERS: dict[str, Describer] = dict(
    [
        described(CapsuleSaved, _saved),
        described(CapsuleInjected, _injected),
        described(CapsuleGap, _gap),
        described(CapsuleStale, _stale),
    ]
)
