"""Ask before launching with a capsule the launch refused as stale or holding secrets.

The refusal names each problem (line and code); "launch anyway" launches again with
that problem accepted, and the launch records what was accepted (its history cell).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from core.errors import CapsuleHasSecrets, CapsuleRefused
from tui.modals.confirm import ConfirmModal
from tui.shared.safe_text import first_line

PROBLEMS_SHOWN = 5


class ConfirmCapsuleLaunch(ConfirmModal):
    """Returns True to launch with the capsule anyway. "Don't launch" has the focus."""

    SAFE_ID = "keep-capsule-out"
    DESTRUCTIVE_ID = "launch-anyway"
    safe_label = "Don't launch (esc)"
    destructive_label = "Launch anyway (ctrl+s)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "answer(True)",
            "Launch anyway",
            id="capsule_refused.yes",
            tooltip="Launch with the capsule as it is, the problems accepted",
        ),
        Binding(
            "escape",
            "answer(False)",
            "Don't launch",
            id="capsule_refused.no",
            tooltip="Launch nothing; fix the capsule first",
        ),
    ]

    def __init__(self, refused: CapsuleRefused) -> None:
        super().__init__()
        self.refused = refused

    def question(self) -> Text:
        secrets = isinstance(self.refused, CapsuleHasSecrets)
        what = "holds what looks like a secret" if secrets else "is stale"
        text = Text()
        text.append(f"The capsule {what}.\n\n", "bold")
        text.append(first_line(self.refused.path, 60) + "\n")
        for problem in self.refused.problems[:PROBLEMS_SHOWN]:
            text.append(f"line {problem.line} · ", "dim")
            text.append(first_line(problem.code, 40) + "\n", "bold")
            text.append(f"  {first_line(problem.message, 56)}\n")
        more = len(self.refused.problems) - PROBLEMS_SHOWN
        if more > 0:
            text.append(f"and {more} more\n", "dim")
        consequence = (
            "The agent would read it as written, secret included."
            if secrets
            else "The agent would trust facts about files that changed since."
        )
        text.append(f"\n{consequence}", "dim")
        return text
