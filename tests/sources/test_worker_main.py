"""Import worker processes never run the importing program's main module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from source_homes import Homes

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path

    if __name__ != "__main__":  # a child process running this program again
        with open(os.environ["MARKS"], "a") as marks:
            marks.write(f"{os.getpid()}\\n")
    else:
        sys.path.insert(0, sys.argv[1])
        from core.orchestrator import AgentOrchestrator

        async def run() -> None:
            orch = await AgentOrchestrator.open(Path(sys.argv[2]))
            try:
                report = await orch.import_sources(
                    Path(sys.argv[3]), Path(sys.argv[4]), workers=2
                )
                print(report.workers, report.sessions_added)
            finally:
                await orch.close()

        asyncio.run(run())
    """
)


def test_workers_do_not_import_the_main_module(realdata: Homes, tmp_path: Path) -> None:
    """A forkserver child would run ``delegate``'s own script (the CLI, the app, all
    they import) before its first task; it imports only the parser."""
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    marks = tmp_path / "marks"
    roots = [str(realdata.claude), str(realdata.codex)]
    done = subprocess.run(
        [sys.executable, str(program), str(ROOT), str(tmp_path / "data"), *roots],
        env={**os.environ, "MARKS": str(marks)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "22"]  # the pool did the work
    assert not marks.exists()
