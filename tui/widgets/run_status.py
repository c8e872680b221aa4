"""What a run is doing, in words: the block the preview shows under a session's messages.

Pure rendering, no I/O: the preview pane gathers the facts (the run row, the
live activity it heard about, the clock) and this module says them. A run in
flight shows its prompt at once, how long it has been going, and — once it has
been quiet for a while — the tail of the agent's standard error, the usual place
a stuck agent explains itself ("retrying in 8s", "model unreachable"). A run
that ended early says how: cancelled (by a person) is not failed, interrupted
(its process died) gives the reason, and the reply so far is kept either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.text import Text

from core.models import Run, RunStatus
from tui.shared import formatting as fmt
from tui.shared.safe_text import clip_lines, visible

PROMPT_LINES = 6
STDERR_LINES = 8
PARTIAL_LINES = 12


@dataclass(frozen=True)
class Activity:
    """The latest a run said, however it reached us (our own run's events, or the store)."""

    stderr_tail: str = ""
    live_output: str = ""
    last_output_at: datetime | None = None
    # The run whose events this process heard (its stderr is fresher than the store's).
    heard_run_id: str | None = None

    def with_stored(self, stored: Activity) -> Activity:
        """This, updated from the run's row: its reply when the row's is newer, its stderr
        unless this process heard the stderr itself (the row lags what was heard)."""
        newer = stored.last_output_at is not None and (
            self.last_output_at is None or stored.last_output_at > self.last_output_at
        )
        return Activity(
            stderr_tail=self.stderr_tail if self.heard_run_id else stored.stderr_tail,
            live_output=stored.live_output if newer else self.live_output,
            last_output_at=stored.last_output_at if newer else self.last_output_at,
            heard_run_id=self.heard_run_id,
        )


def elapsed(seconds: float) -> str:
    """``"8s"``, ``"1m 12s"``, ``"2h 03m"``: a running time that reads at a glance."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def _tail(text: str, lines: int) -> str:
    kept = [ln for ln in visible(text).rstrip("\n").split("\n") if ln.strip()]
    return "\n".join(kept[-lines:])


def _indented(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


def run_block(
    run: Run,
    now: datetime,
    activity: Activity,
    *,
    echo_prompt: bool,
    show_partial: bool,
    quiet_s: float,
) -> Text:
    """The lines about ``run``; empty when there is nothing to add to the messages.

    ``echo_prompt``: the prompt is not on the page yet (an agent CLI writes its own
    transcript, read after the run). ``show_partial``: the reply so far is not on
    the page either. ``quiet_s``: how long without output before stderr is shown.
    """
    text = Text()
    if run.status is RunStatus.RUNNING:
        if echo_prompt:
            prompt, hidden = clip_lines(visible(run.prompt.strip()), PROMPT_LINES)
            text.append("user", "bold blue")
            text.append("  (sent)\n", "dim")
            text.append(prompt)
            if hidden:
                text.append(f"\n… {hidden} more lines", "dim italic")
            text.append("\n\n")
        text.append("running ", "bold yellow")
        text.append(elapsed((now - run.started_at).total_seconds()), "bold yellow")
        text.append(f" · run {fmt.short_id(run.run_id)}", "dim")
        last = activity.last_output_at or run.started_at
        quiet = (now - last).total_seconds()
        if quiet >= quiet_s:
            text.append(f" · no output for {elapsed(quiet)}", "dark_orange")
            stderr = _tail(activity.stderr_tail, STDERR_LINES)
            if stderr:
                text.append("\nthe agent's stderr, last lines:\n", "dim")
                text.append(_indented(stderr), "dim")
        return text
    took = elapsed(run.duration_s or 0.0)
    if run.status is RunStatus.CANCELLED:
        text.append("■ cancelled", "bold yellow")
        text.append(f" after {took} · the reply so far is kept", "dim")
    elif run.status is RunStatus.INTERRUPTED:
        text.append("⚠ interrupted", "bold dark_orange")
        text.append(f" after {took}: ", "dim")
        text.append(visible(run.error or "its process ended before the run did"))
    else:
        return text
    partial = run.output.strip() or activity.live_output.strip()
    if show_partial and partial:
        body, hidden = clip_lines(visible(partial), PARTIAL_LINES)
        text.append("\nassistant", "bold green")
        text.append("  (reply so far)\n", "dim")
        text.append(body)
        if hidden:
            text.append(f"\n… {hidden} more lines", "dim italic")
    return text
