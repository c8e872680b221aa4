"""Hand-offs that act: ask an agent for its hand-off, continue work in a new session.

Above the orchestrator (it launches and follows up through it), below the supervisor.
:class:`HandoffOutcome` (defined with the shared models, so history events carry it)
is what a hand-off did, the one answer every front end renders.
"""

from core.continuation.service import Continuation
from core.models import HandoffOutcome, HandoffResult

__all__ = ["Continuation", "HandoffOutcome", "HandoffResult"]
