"""A problem found in a context document: where, a stable code, and what to do.

Shared by every document check (capsules, hand-offs, compact returns) so the CLI prints
them alike (``path:line: code: message``) and the editor jumps to the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: ``line`` is 1-based (0: the document as a whole)."""

    line: int
    code: str  # stable, lower_snake_case (e.g. ``section_order``, ``secret_api_key``)
    message: str  # a sentence a person can act on
    severity: Literal["error", "warning"] = "error"

    def located(self, path: str) -> str:
        """``path:line: code: message``, the form ``check`` prints."""
        return f"{path}:{self.line}: {self.code}: {self.message}"
