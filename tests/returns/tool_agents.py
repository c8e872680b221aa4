"""Scripted role agents for the ``delegate_agent`` return tests.

Each agent finds its own hand-off path in its prompt (the protocol section names it),
writes its hand-off file there with the scripted Write tool (the details: files, test
figures, a long reasoning paragraph), then answers the minimal JSON. Others misbehave
on purpose: ``verbose-dev`` answers the seed's old verbose report, ``lazy-dev`` answers
well but writes nothing, ``broken-dev`` fails.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from support import write_config

T = TypeVar("T")

LINES = {
    "developer": ["Implemented {group}", "Changed src/{group}.py and tests", "15 tests pass"],
    "qa_expert": ["Tested {group}", "Ran 25 integration tests", "25/25 passed"],
}
STATUS = {"developer": "READY_FOR_QA", "qa_expert": "PASS"}
DETAILS = (
    "Reasoning for group {group}: " + "the module was split, each branch covered, " * 120
).strip()
FIELDS: dict[str, dict[str, Any]] = {
    "developer": {
        "files_modified": ["src/{group}.py"],
        "files_created": ["tests/test_{group}.py"],
        "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
        "branch": "feature/{group}",
        "concerns": [DETAILS],
    },
    "qa_expert": {"total_tests": {"passed": 25, "failed": 0}, "quality_assessment": "good"},
}
VERBOSE = (
    "## Implementation Complete\n\n**Summary:** implemented the feature.\n\n"
    + "Details: every file was read and changed with care. " * 300
    + '\n\n{"status": "READY_FOR_QA", "summary": ["a", "b", "c"]}\n'
)


def own_handoff(role: str) -> str:
    """A regex finding ``role``'s own hand-off path in its prompt (``handoff``, ``group``)."""
    return (
        r"(?s)hand-off file `(?P<handoff>\.delegate/artifacts/[\w.-]+/(?P<group>[\w.-]+)"
        rf"/handoffs/handoff_{role}\.json)`"
    )


def answer(role: str) -> str:
    return json.dumps({"status": STATUS[role], "summary": LINES[role]})


def handoff(role: str) -> str:
    body = {"from_agent": role, "status": STATUS[role], "summary": "{group} done", **FIELDS[role]}
    return json.dumps(body)


def script(role: str, *, write: bool = True, reply: str | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"match": own_handoff(role), "reply": reply or answer(role)}
    if write:
        rule["write"] = [{"path": "{handoff}", "content": handoff(role)}]
    return {"rules": [rule]}


AGENTS: dict[str, dict[str, Any]] = {
    "dev": script("developer"),
    "qa": script("qa_expert"),
    "verbose-dev": script("developer", reply=VERBOSE),
    "lazy-dev": script("developer", write=False),
    "broken-dev": {"rules": [{"match": ".", "fail": "the build exploded"}]},
}


def gate_of(tmp_path: Path) -> Path:
    """The file ``gated-dev`` waits for after its first word (it never appears unless a
    test makes it)."""
    return tmp_path / "gate"


def role_data_dir(tmp_path: Path) -> Path:
    """A data folder whose config has the role agents above (scripts as JSON files),
    and ``gated-dev``: a developer whose answer stops after one word until the gate."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    extra = []
    gated = script("developer")
    gated["rules"][0].update(gate=str(gate_of(tmp_path)), gate_after=1)
    for name, body in {**AGENTS, "gated-dev": gated}.items():
        path = scripts / f"{name}.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        extra.append(f'\n[agents.{name}]\nrunner = "scripted"\nscript = "{path}"\n')
    return write_config(tmp_path / "data", "".join(extra))


def shown(repo: Path, handoff_file: str) -> str:
    """A hand-off file as prompts name it: relative to the repository root."""
    path = Path(handoff_file)
    return path.relative_to(repo.resolve()).as_posix() if path.is_absolute() else handoff_file


def make_repo(tmp_path: Path) -> Path:
    """A real git repository the roles work in (the artifacts go under its root)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


async def eventually(
    check: Callable[[], Awaitable[T | None]], what: str, within_s: float = 30
) -> T:
    """What ``check()`` answers once it is truthy, polled with a deadline."""
    deadline = time.monotonic() + within_s
    while True:
        found = await check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)
