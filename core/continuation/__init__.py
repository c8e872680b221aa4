"""Hand-offs that act: ask an agent for its hand-off, continue work in a new session.

Above the orchestrator (it launches and follows up through it), below the supervisor.
"""

from core.continuation.service import Continuation, HandoffOutcome

__all__ = ["Continuation", "HandoffOutcome"]
