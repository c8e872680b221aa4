"""Run as a second process: writes one finished session into the store of a data folder.

``python another_process.py DATA_DIR`` — what a ``delegate run`` in another
terminal leaves in the store, with fixed ids and times (snapshots show them).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tui_support import insert_sessions, session_with

ARRIVED_ID = "a55e55ed-0000-4000-8000-000000000000"
ARRIVED_TITLE = "Bisect the flaky login test"


def main(data_dir: Path) -> None:
    arrived = session_with(
        ARRIVED_ID,
        [ARRIVED_TITLE, "Bisected: the flake starts at 3f2a9c1 (the session cache change)."],
        title=ARRIVED_TITLE,
        agent_id="tester",
        minutes_ago=0,
        cwd="/home/dev/src/web-console",
    )
    asyncio.run(insert_sessions(data_dir, [arrived]))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
