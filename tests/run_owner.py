"""A second process that owns one run, with the owner kind and heartbeat a test picks.

``python run_owner.py DATA_DIR OWNER_KIND HEARTBEAT_S AGENT PROMPT`` launches
one run through the public orchestrator, prints ``started RUN_ID`` once it is
in flight, and exits when the run is closed: 143 if SIGTERM stopped it (as
``delegate run`` does), else 0. ``delegate run`` cannot be given a heartbeat
period; this stands in for any owner (a panel, an MCP server, a worker).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import cast

from core.models import OwnerKind
from core.orchestrator import AgentOrchestrator


async def own(data_dir: Path, owner_kind: str, heartbeat_s: float, agent: str, prompt: str) -> int:
    orch = await AgentOrchestrator.open(
        data_dir, owner_kind=cast(OwnerKind, owner_kind), heartbeat_s=heartbeat_s
    )
    signalled: list[int] = []
    try:
        [handle] = await orch.delegate(prompt=prompt, agent_id=agent)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            signalled.append(signal.SIGTERM)
            handle.cancel()

        loop.add_signal_handler(signal.SIGTERM, stop)
        stream = handle.stream()
        await anext(aiter(stream))  # in flight
        print(f"started {handle.run_id}", flush=True)
        async for _ in stream:
            pass
        await handle.wait()
    finally:
        await orch.close()
    return 143 if signalled else 0


if __name__ == "__main__":
    data, kind, beat, agent, prompt = sys.argv[1:6]
    sys.exit(asyncio.run(own(Path(data), kind, float(beat), agent, prompt)))
