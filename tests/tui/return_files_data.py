"""A chain run to the end by delegate whose last step wrote no hand-off file.

Scripted role agents (developer → QA → tech lead → PM) in a real git repository:
each writes its hand-off file where its prompt says, but the PM, whose ``BAZINGA``
ends the chain and needs no file, writes none.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tui_support import write_config

from core.chains.runner import run_chains
from core.orchestrator import AgentOrchestrator
from core.returns.model import AgentRole, RoleLaunch

SESSION = "crp-20261121-205500-5f1e"
ROLES = {
    "developer": ("dev-bot", "READY_FOR_QA"),
    "qa_expert": ("qa-bot", "PASS"),
    "tech_lead": ("tl-bot", "APPROVED"),
    "project_manager": ("pm-bot", "BAZINGA"),
}
WRITES_NONE = "project_manager"


def handoff_of(repo: Path, role: str) -> Path:
    return repo / ".delegate" / "artifacts" / SESSION / "AUTH" / "handoffs" / f"handoff_{role}.json"


def _script(role: str, status: str) -> dict[str, object]:
    match = (
        r"(?s).*?(?P<file>\.delegate/artifacts/(?P<session>[\w.-]+)/(?P<group>[\w.-]+)"
        rf"/handoffs/handoff_{role}\.json)"
    )
    answer = {"status": status, "summary": [f"{role} on it", "one file", status]}
    rule: dict[str, object] = {"match": match, "reply": json.dumps(answer)}
    if role != WRITES_NONE:
        handoff = {"from_agent": role, "status": status, "summary": f"{{group}} {status}"}
        rule["write"] = [{"path": "{file}", "content": json.dumps(handoff)}]
    return {"rules": [rule]}


def chain_data_dir(root: Path) -> tuple[Path, Path]:
    """A data folder with the role agents, and the git repository they work in."""
    root.mkdir(parents=True, exist_ok=True)
    extra = ["[returns.agents]"]
    extra += [f'{role} = "{agent}"' for role, (agent, _) in ROLES.items()]
    for role, (agent, status) in ROLES.items():
        path = root / f"{agent}.json"
        path.write_text(json.dumps(_script(role, status)), encoding="utf-8")
        extra.append(f'\n[agents.{agent}]\nrunner = "scripted"\ndelay = 0\nscript = "{path}"')
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return write_config(root / "data", "\n".join(extra)), repo


async def run_the_chain(orch: AgentOrchestrator, repo: Path) -> None:
    report = await run_chains(
        orch,
        first=[("Build AUTH.", RoleLaunch(AgentRole.DEVELOPER, SESSION, "AUTH"))],
        agent_id="dev-bot",
        cwd=str(repo),
        settings=orch.settings,
    )
    assert len(report.lines) == len(ROLES), report.lines
