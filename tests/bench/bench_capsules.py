"""Benchmark of capsules: checking one, launching with one, the drift round.

A real git repository of N committed files; a full capsule (every section, five
references to committed files) saved where ``latest`` finds it. Times, median of a
few runs:

- ``check_capsule`` (validation, secret lint, drift of the five references);
- the secret lint alone on a capsule-sized text of 21,600 characters;
- ``prepare_capsule`` (find ``latest``, read, check, register or reuse the row);
- a launch of the scripted ``echo`` agent awaited to its end, without and with the
  capsule (what a capsule adds to a launch);
- one drift round as the supervisor's monitor does it: ``changed_references`` for
  50 registered capsules.

Usage::

    uv run python tests/bench/bench_capsules.py            # 10,000 files, 7 runs
    uv run python tests/bench/bench_capsules.py --smoke    # 500 files, 2 runs, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from core.capsules.check import check_capsule
from core.capsules.drift import reference_for
from core.capsules.launch import prepare_capsule
from core.capsules.secrets import secret_problems
from core.capsules.staleness import changed_references
from core.config import Settings
from core.orchestrator import AgentOrchestrator

BRANCH = "feature/bench"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}
DRIFT_CAPSULES = 50


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    for i in range(files):
        path = repo / f"pkg{i // 100:03d}" / f"module_{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n")
    subprocess.run(
        f"git init -q -b {BRANCH} && git add . && git commit -q -m start",
        shell=True,
        cwd=repo,
        env=GIT_ENV,
        check=True,
    )
    return repo


def capsule_text(repo: Path, files: int) -> str:
    """A full capsule (about 1,000 tokens of body) referencing five committed files."""
    picked = [f"pkg{i // 100:03d}/module_{i:05d}.py" for i in range(0, files, files // 5)][:5]
    references = "".join(
        f"  - path: {ref.path}\n    blob: {ref.blob}\n"
        for ref in (reference_for(repo, path) for path in picked)
    )
    knowledge = "\n".join(
        f"- `{path}` holds the value the parser reads at start (checked in step {n})."
        for n, path in enumerate(picked)
    )
    filler = "\n".join(
        f"- Step {n}: the loader reads the settings, then the cache, then the index."
        for n in range(40)
    )
    return f"""---
branch: {BRANCH}
source_session: 20261127-bench
created_at: 2026-11-27T06:00:00Z
primary_objective: "Make the loader read the index once"
token_budget: 1200
version: 0.1
references:
{references}---
# Mission Snapshot
- **User intent:** the loader reads the index once.
- **Current status:** it reads it three times.

# Key Decisions & Rationale
1. Cache in the loader, not in the index (one owner).

# Active Workstreams
- loader → pkg000/module_00000.py, no blockers.

# Pending Actions
- [ ] Move the read into the constructor (next agent).

# Knowledge Base
{knowledge}
{filler}

# Risks & Watchpoints
- The index may change while the loader runs.

# Transcript Highlights
- 2026-11-27T05:55:00Z: the user asked for one read (message 4).

# Exploratory Threads & User Preferences
- The user prefers short commits.
"""


def save(repo: Path, text: str, stamp: str) -> Path:
    folder = repo / ".delegate" / "capsules" / BRANCH
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}.md"
    path.write_text(text, encoding="utf-8")
    return path


def timed(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def timed_async(fn: Callable[[], Awaitable[object]], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def run(files: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root, files)
        text = capsule_text(repo, files)
        path = save(repo, text, "20261127T060000Z")
        figures = {"check_capsule": timed(lambda: check_capsule(path, text, repo=repo), runs)}
        lint_text = (text * (21_600 // len(text) + 1))[:21_600]
        figures["secret lint, 21,600 chars"] = timed(lambda: secret_problems(lint_text), runs)
        orch = await AgentOrchestrator.open(root / "data", settings=Settings())
        try:
            figures["prepare_capsule"] = await timed_async(
                lambda: prepare_capsule(orch.store, repo, "latest"), runs
            )

            async def launch(capsule: str | None) -> None:
                handles = await orch.delegate(
                    prompt="Read the index once.", agent_id="echo", cwd=str(repo), capsule=capsule
                )
                run = await handles[0].wait()
                assert run.status.value == "completed", run

            figures["echo launch, no capsule"] = await timed_async(lambda: launch(None), runs)
            figures["echo launch, with the capsule"] = await timed_async(
                lambda: launch("latest"), runs
            )
        finally:
            await orch.close()
        drifting = [save(repo, text, f"20261127T07{n:04d}Z") for n in range(DRIFT_CAPSULES)]
        # One referenced file changes: every capsule has drifted, the round reads them all.
        (repo / "pkg000" / "module_00000.py").write_text("VALUE = -1\n")

        def drift_round() -> None:
            for capsule in drifting:
                assert changed_references(capsule), capsule

        figures[f"drift round, {DRIFT_CAPSULES} capsules"] = timed(drift_round, runs)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="500 files, 2 runs")
    args = parser.parse_args(argv)
    files, runs = (500, 2) if args.smoke else (10_000, 7)
    figures = asyncio.run(run(files, runs))
    print(f"capsules, repository of {files:,} files (median of {runs} runs)")
    for case, seconds in figures.items():
        print(f"{case}: {seconds * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
