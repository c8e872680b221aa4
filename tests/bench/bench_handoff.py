"""Benchmark of a hand-off built from facts: < 1 s for a 10,000-file repository.

A real git repository of N committed files, 50 of them changed and 20 new; a
session (imported, so delegate does not prompt it) with 30 messages working in
it. Times ``git_facts`` alone and the whole ``Continuation.hand_off`` (facts,
render, redact, atomic write, registry, pending note); median of a few runs.

Usage::

    uv run python tests/bench/bench_handoff.py            # 10,000 files
    uv run python tests/bench/bench_handoff.py --smoke    # 1,000 files, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from core.config import Settings
from core.continuation.service import Continuation
from core.documents.handoff_facts import git_facts
from core.models import Role, RunStatus, SessionMode, SessionState
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession, NewMessage, NewSession

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}
SESSION = "0f3a9c1e-1111-2222-3333-444455556666"


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    for i in range(files):
        path = repo / f"pkg{i // 100:03d}" / f"module_{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-q", "-m", "start")
    for i in range(0, files, max(1, files // 50)):
        (repo / f"pkg{i // 100:03d}" / f"module_{i:05d}.py").write_text(f"VALUE = {i + 1}\n")
    for i in range(20):
        (repo / f"new_{i}.py").write_text("NEW = True\n")
    return repo


def session(repo: Path) -> FinishedSession:
    base = 1_700_000_000_000_000
    return FinishedSession(
        session=NewSession(
            conversation_id=SESSION,
            agent_id="claude-code",
            mode=SessionMode.STANDARD,
            cwd=str(repo),
            title="a long refactoring",
            created_us=base,
            context_limit=200_000,
            source="claude-code",
        ),
        messages=[
            NewMessage(
                id=f"m{i}",
                role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
                content=f"step {i}: " + "words of the conversation " * 40,
                created_us=base + i,
                token_count=200,
            )
            for i in range(30)
        ],
        last_interacted_us=base + 30,
        state=SessionState.IDLE,
        last_run_status=RunStatus.COMPLETED,
        context_tokens=140_000,
    )


def median_s(times: list[float]) -> float:
    return statistics.median(times)


async def run(files: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root, files)
        facts_times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            facts = git_facts(repo)
            facts_times.append(time.perf_counter() - t0)
        assert facts is not None
        assert len(facts.status) >= 50
        orch = await AgentOrchestrator.open(root / "data", settings=Settings())
        try:
            await orch.store.bulk.insert([session(repo)])
            service = Continuation(orch)
            hand_off_times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                outcome = await service.hand_off(SESSION)
                hand_off_times.append(time.perf_counter() - t0)
                assert outcome.document is not None, outcome
                assert outcome.pending, outcome
        finally:
            await orch.close()
    return {
        "git status + diff stat": median_s(facts_times),
        "whole hand-off": median_s(hand_off_times),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="1,000 files, 2 runs")
    args = parser.parse_args(argv)
    files, runs = (1_000, 2) if args.smoke else (10_000, 5)
    figures = asyncio.run(run(files, runs))
    print(f"hand-off from facts, repository of {files:,} files (median of {runs} runs)")
    for case, seconds in figures.items():
        print(f"{case}: {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
