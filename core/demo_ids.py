"""The demo's fixed session ids: made by :mod:`core.demo`, found again to clear the demo.

Stdlib only, below every layer, so the orchestrator can name demo sessions
without importing the demo itself.
"""

from __future__ import annotations

import uuid

DEMO_NAMESPACE = uuid.UUID("6f0b7c1e-2a8d-4f43-9a57-3c1d0e5b8a21")


def demo_id(index: int) -> str:
    """The id of the demo's ``index``-th session (the same on every machine)."""
    return str(uuid.uuid5(DEMO_NAMESPACE, f"demo-session-{index}"))
