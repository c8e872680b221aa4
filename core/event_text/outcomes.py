"""What a hand-off did, in one line a person can act on (the CLI, ``delegate watch``,
the panel's history): the one wording of a ``HandoffOutcome``."""

from __future__ import annotations

from core.event_text.words import short_id, visible
from core.models import HandoffOutcome, HandoffResult


def handoff_outcome_line(outcome: HandoffOutcome) -> str:
    """What a hand-off did, in one line a person can act on (the CLI, ``delegate watch``,
    the panel's history): written or not and where, continued in whom or waiting, and
    what follows a failure. Paths and reasons are shown safe (no control characters)."""
    line = _outcome_line(outcome)
    if outcome.elsewhere and outcome.result is not HandoffResult.ALREADY:
        line += f" (kept under delegate's data folder because {visible(outcome.elsewhere)})"
    return line


def _outcome_line(outcome: HandoffOutcome) -> str:
    who = f"session {short_id(outcome.conversation_id)}"
    path = visible(outcome.document.path) if outcome.document else ""
    continue_it = f"`delegate handoff continue {path}`"
    failure = visible(outcome.failure or "")
    match outcome.result:
        case HandoffResult.CONTINUED:
            return (
                f"{who}: hand-off written to {path}; its work continues in session"
                f" {outcome.successor_id}"
            )
        case HandoffResult.PENDING:
            note = f" (see {visible(outcome.pending_note)})" if outcome.pending_note else ""
            return (
                f"{who}: hand-off written to {path}; waiting for you to continue it{note}:"
                f" {continue_it}"
            )
        case HandoffResult.SPAWN_FAILED:
            note = (
                f"{visible(outcome.pending_note)} says how"
                if outcome.pending_note
                else "no pending note could be written"
            )
            return (
                f"{who}: hand-off written to {path} but NOT continued ({failure}); it waits for"
                f" you: {note}, or run {continue_it}"
            )
        case HandoffResult.WRITE_FAILED:
            force = f"{outcome.force_percent}%" if outcome.force_percent else "the force level"
            folder = visible(outcome.folder or "its folder")
            return (
                f"{who}: hand-off NOT written under {folder} ({failure}); it keeps working and is"
                f" asked again after its next turn, past {force} delegate sends it nothing more;"
                f" write one with `delegate handoff write {outcome.conversation_id}` or risk"
                " losing its context"
            )
        case HandoffResult.ALREADY:
            return (
                f"{who} was handed off before: its work continues in session {outcome.successor_id}"
            )
        case HandoffResult.NOT_DONE:
            return f"{who}: no hand-off this time ({failure})"
