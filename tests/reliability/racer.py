"""One racing process: reads a request line, sends it through ``call_tool``, prints the answer.

Started several times by ``trial_race``; the parent writes the same request
to every racer at once, so their claims hit the store together. The store is
opened once, before the first round (as a long-lived MCP server holds it), so
the racers' claims are apart by microseconds, not by start-up time.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from pathlib import Path

from core.orchestrator import AgentOrchestrator
from core.tokens import count_tokens
from core.tools import call_tool


async def serve(data_dir: Path) -> None:
    orch = await AgentOrchestrator.open(data_dir)
    # Load the token encoding now: its first use takes a second, which would
    # make this racer late to every race of its first round.
    count_tokens("warm up")
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            try:
                answer = await call_tool(orch, "delegate_agent", line)
            except Exception:  # reported to the parent as a loss, never fatal to the racer
                answer = {"traceback": traceback.format_exc()}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        await orch.close()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
