"""Scripted role agents for chain tests: each writes its hand-off file where its prompt
says, then answers the minimal JSON (or whatever a test makes it answer instead).

One agent per role (``dev-bot``, ``qa-bot``, ``tl-bot``, ``pm-bot``), named for the
role in ``[returns] agents``: a role's prompt also names the previous role's file, so
a rule keyed on the file's name alone could answer for the wrong role.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support import write_config

AGENTS = {
    "developer": "dev-bot",
    "qa_expert": "qa-bot",
    "tech_lead": "tl-bot",
    "project_manager": "pm-bot",
}
LINES = {
    "developer": ("Implemented {group}", "Created src/{group}.py and its tests", "15 tests pass"),
    "qa_expert": ("Tested {group}", "Ran integration, contract and E2E tests", "25/25 passed"),
    "tech_lead": ("Reviewed {group}", "Checked security, architecture, tests", "Approved"),
    "project_manager": ("Tracked {group}", "The group is complete", "BAZINGA"),
}
FIELDS: dict[str, dict[str, Any]] = {
    "developer": {
        "files_modified": ["src/{group}.py"],
        "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
        "branch": "feature/group-{group}",
    },
    "qa_expert": {"total_tests": {"passed": 25, "failed": 0}, "quality_assessment": "good"},
    "tech_lead": {"decision": "APPROVED", "code_quality_score": 9},
    "project_manager": {"groups_completed": ["{group}"]},
}


def handoff_match(role: str, *, when: str = "") -> str:
    """A regex finding ``role``'s own hand-off path in its prompt (named groups ``file``,
    ``session``, ``group``); ``when``: a further regex the prompt must hold."""
    ahead = f"(?=.*?{when})" if when else ""
    return (
        f"(?s){ahead}.*?(?P<file>\\.delegate/artifacts/(?P<session>[\\w.-]+)/"
        f"(?P<group>[\\w.-]+)/handoffs/handoff_{role}\\.json)"
    )


def role_rule(
    role: str,
    status: str,
    *,
    when: str = "",
    write: bool = True,
    reply: str | None = None,
    fail: str | None = None,
    gate: Path | None = None,
) -> dict[str, Any]:
    """A rule answering as ``role`` with ``status``: the hand-off file written (unless
    ``write`` is False), then the minimal JSON (or ``reply``, or a failed run)."""
    rule: dict[str, Any] = {"match": handoff_match(role, when=when)}
    if fail is not None:
        rule["fail"] = fail
        return rule
    rule["reply"] = reply or json.dumps({"status": status, "summary": list(LINES[role])})
    if write:
        handoff = {
            "from_agent": role,
            "status": status,
            "summary": f"{LINES[role][0]}: {status}",
            "session_id": "{session}",
            "group_id": "{group}",
            **FIELDS[role],
        }
        rule["write"] = [{"path": "{file}", "content": json.dumps(handoff, indent=2)}]
    if gate is not None:
        rule["gate"] = str(gate)
    return rule


def chain_config(
    data_dir: Path,
    rules: dict[str, Sequence[dict[str, Any]]],
    *,
    returns: str = "",
) -> Path:
    """A data folder whose config has a scripted agent per role, each with ``rules``
    (first match wins) before its default (the role's happy-path status)."""
    happy = {
        "developer": "READY_FOR_QA",
        "qa_expert": "PASS",
        "tech_lead": "APPROVED",
        "project_manager": "BAZINGA",
    }
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    blocks = []
    for role, agent in AGENTS.items():
        script = data_dir / f"{agent}.json"
        every = [*rules.get(role, ()), role_rule(role, happy[role])]
        script.write_text(json.dumps({"rules": every}), encoding="utf-8")
        blocks.append(f'[agents.{agent}]\nrunner = "scripted"\ndelay = 0\nscript = "{script}"\n')
    agents = "\n".join(f'{role} = "{agent}"' for role, agent in AGENTS.items())
    return write_config(
        data_dir, "\n".join(blocks) + f"\n[returns]\n{returns}\n[returns.agents]\n{agents}\n"
    )


def git_repo(path: Path) -> Path:
    """An empty git repository (the artifacts folder goes under its root)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    return path
