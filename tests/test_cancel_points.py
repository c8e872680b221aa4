"""A cancel at any await of ``delegate()`` leaves no session running or pending.

The call is driven step by step (a tiny task loop of our own) and
``CancelledError`` is thrown in at its k-th suspension, for every k until
the call completes without reaching k: every await point is hit once, the
window between "claim committed" and "task started" included.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from support import BASE_US, finished, query

from core.errors import DelegateError
from core.orchestrator import AgentOrchestrator


async def cancel_at(coro: Coroutine[Any, Any, Any], k: int) -> bool:
    """Drive ``coro``, cancelling it at its k-th suspension; False when it ended before."""
    step = 0
    throw: BaseException | None = None
    while True:
        try:
            yielded = coro.throw(throw) if throw is not None else coro.send(None)
        except (StopIteration, asyncio.CancelledError):
            return step > k
        except DelegateError:  # a refusal (e.g. busy) is an outcome too: the invariant holds
            return step > k
        throw = None
        if step == k:
            throw = asyncio.CancelledError()
        elif yielded is None:
            await asyncio.sleep(0)
        else:
            yielded._asyncio_future_blocking = False
            await asyncio.wait([yielded])
        step += 1


def left_open(data_dir: Path) -> list[tuple[Any, ...]]:
    return query(
        data_dir,
        "SELECT conversation_id, state FROM sessions WHERE state IN ('running', 'pending')",
    ) + query(data_dir, "SELECT run_id, status FROM runs WHERE status = 'running'")


CALLS: dict[str, dict[str, Any]] = {
    "launch": {"prompt": "hello"},
    "detached": {"prompt": "hello", "mode": "detached"},
    "follow-up": {"prompt": "again", "conversation_id": "c1"},
    "batch": {"batch": [{"prompt": "one"}, {"prompt": "two"}]},
}


@pytest.mark.parametrize("call", list(CALLS))
async def test_a_cancel_at_any_await_of_delegate_leaves_nothing_running(
    data_dir: Path, call: str
) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished("c1", BASE_US)])
        k = 0
        while await cancel_at(orch.delegate(**CALLS[call]), k):
            for handle in orch.running():
                await asyncio.wait_for(handle.wait(), 10)
            assert left_open(data_dir) == [], f"cancelled at await {k}"
            k += 1
        assert k > 5  # the call has awaits, and each was hit
    finally:
        await orch.close()
    # The uncancelled call's run ends too (a detached one in its own worker process).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not left_open(data_dir):
            break
        await asyncio.sleep(0.05)
    assert left_open(data_dir) == []
