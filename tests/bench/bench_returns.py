"""Benchmark of compact returns: tokens the primary receives from its delegates.

One four-group cycle (developer -> QA expert -> tech lead -> project manager in each
group) with scripted agents, run three ways through ``delegate_agent`` (the tool
boundary, ``call_tool``), each response measured as the MCP server sends it
(``json.dumps``) with tiktoken (``core.tokens``):

- ``full text``: today's launches without ``agent_role``; the agents answer in the
  seed's verbose formats (developer ~5,000 tokens, QA, tech lead and PM ~3,000: the
  low ends of the seed's estimates) and the response carries each whole reply;
- ``compact, a call per role``: each role launched with ``agent_role`` (a batch of
  the four groups per role); the agents write their hand-off files and answer only
  the minimal JSON, the response is that return plus ids;
- ``compact, chain``: one call with ``"chain": true``; delegate routes each return
  to the next role and answers one display line per step (and the steps' ids).

Usage::

    uv run python tests/bench/bench_returns.py            # four groups
    uv run python tests/bench/bench_returns.py --smoke    # two groups, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import load_settings
from core.orchestrator import AgentOrchestrator
from core.tokens import count_tokens
from core.tools import call_tool

GROUPS = ("AUTH", "BILLING", "SEARCH", "NOTIFY")
ROLES = ("developer", "qa_expert", "tech_lead", "project_manager")
VERBOSE_TOKENS = {"developer": 5_000, "qa_expert": 3_000, "tech_lead": 3_000}
PM_VERBOSE_TOKENS = 3_000
SEED_PER_RETURN = 150
SEED_PER_CYCLE = 1_800  # 4 groups x 3 agents x ~150 (the seed counts no PM return)
SEED_VERBOSE_PER_RETURN = 25_000


def received(response: dict[str, Any]) -> int:
    """Tokens of a tool response as the MCP server sends it to the primary."""
    return count_tokens(json.dumps(response, ensure_ascii=False))


# --- the seed's verbose formats, filled until they reach a size ---------------------


def _grown(head: Callable[[int], str], item: Callable[[int], str], target: int) -> str:
    """``head(n)`` followed by items 1..n, the smallest n reaching ``target`` tokens."""
    items: list[str] = []
    while True:
        items.append(item(len(items) + 1))
        if len(items) % 8 == 0 and count_tokens(head(len(items)) + "".join(items)) >= target:
            return head(len(items)) + "".join(items)


def verbose_developer(group: str, target: int) -> str:
    def head(n: int) -> str:
        return (
            "## Implementation Complete\n\n"
            f"**Summary:** Implemented the {group.lower()} feature end to end, with"
            f" {n} supporting changes, migrations and tests.\n\n"
            "**Files Modified:**\n"
            f"- src/{group.lower()}/handler.py (created)\n"
            f"- src/{group.lower()}/middleware.py (modified)\n"
            f"- tests/test_{group.lower()}.py (created)\n\n"
            "**Code Snippet** (most important change):\n```python\n"
            f"def handle_{group.lower()}(request: Request) -> Response:\n"
            "    token = request.headers.get('Authorization', '')\n"
            "    claims = verify(token, key=settings.secret, leeway=30)\n"
            "    if claims is None:\n"
            "        return Response(status=401, body='invalid token')\n"
            "    return Response(status=200, body=render(claims))\n```\n\n"
            f"**Tests:**\n- Total: {n}\n- Passing: {n}\n- Failing: 0\n\n"
            "**Test coverage:**\n"
        )

    def item(i: int) -> str:
        return (
            f"- Case {i}: a {group.lower()} request with variant {i} of its input is"
            f" accepted, its response carries the expected fields, the audit log gets one"
            f" entry, and a malformed variant {i} is refused with a clear error message\n"
            f"  Key change {i}: the validation of variant {i} moved into the shared"
            f" middleware so every endpoint checks it the same way before the handler runs\n"
        )

    tail = (
        "\n**Concerns/Questions:**\n- Should we add refresh token rotation?\n\n"
        "**Status:** READY_FOR_QA\n**Next Step:** Orchestrator, please forward to QA Expert\n"
    )
    return _grown(head, item, target - count_tokens(tail)) + tail


def verbose_qa(group: str, target: int) -> str:
    def head(n: int) -> str:
        return (
            "## QA Expert: Test Results - PASS\n\n"
            f"All {n} scenarios of the {group.lower()} work pass.\n\n### Test Summary\n\n"
            f"**Integration Tests**: {n}/{n} passed (30s)\n"
            "**Contract Tests**: 6/6 passed (12s)\n**E2E Tests**: 4/4 passed (1m45s)\n"
            f"**Total Tests**: {n + 10}/{n + 10} passed\n**Total Duration**: 2m27s\n\n"
            "### Scenarios\n\n"
        )

    def item(i: int) -> str:
        return (
            f"- Scenario {i}: the {group.lower()} flow with fixture set {i} was exercised"
            f" through the public API; responses, side effects and the audit trail match"
            f" the contract, retries after a simulated timeout are idempotent, and the"
            f" error path for fixture set {i} returns the documented status code\n"
        )

    tail = (
        "\n### Quality Assessment\n\nIntegration: solid. Contracts: complete. E2E: stable.\n\n"
        "### Handoff to Tech Lead\n\nAll automated tests passing. Ready for code quality"
        f" review.\n\nFiles tested: src/{group.lower()}/\nBranch: feature/group-{group}\n\n"
        "**Status:** PASS\n**Next Step:** Orchestrator, please forward to Tech Lead\n"
    )
    return _grown(head, item, target - count_tokens(tail)) + tail


def verbose_tech_lead(group: str, target: int) -> str:
    def head(n: int) -> str:
        return f"## Review: APPROVED\n\n**What Was Done Well:** ({n} points)\n"

    def item(i: int) -> str:
        return (
            f"- Point {i}: in the {group.lower()} module the responsibility of step {i} is"
            f" kept in one function with a clear name, its errors are typed and reported"
            f" with an actionable message, and the tests cover both its success and its"
            f" failure paths without mocking the module under test\n"
        )

    tail = (
        "\n**Code Quality:** Good.\n\n**Test Coverage:** Adequate, 92%.\n\n"
        "**Optional Suggestions for Future:**\n- Add refresh token rotation.\n\n"
        "**Ready for Production:** YES\n\n"
        "**Status:** APPROVED\n**Next Step:** Orchestrator, please forward to PM\n"
    )
    return _grown(head, item, target - count_tokens(tail)) + tail


def verbose_pm(group: str, target: int) -> str:
    def head(n: int) -> str:
        return (
            f"## Project Manager: Group {group} complete\n\n"
            f"Tracked {n} items of the group's plan; all are done.\n\n### Progress\n\n"
        )

    def item(i: int) -> str:
        return (
            f"- Item {i} of group {group}: delivered, tested by QA, approved by the tech"
            f" lead; no follow-up needed, its acceptance criteria are met and recorded,"
            f" and the remaining groups do not depend on it\n"
        )

    tail = "\n**Status:** BAZINGA\n"
    return _grown(head, item, target - count_tokens(tail)) + tail


def verbose_reply(role: str, group: str) -> str:
    if role == "developer":
        return verbose_developer(group, VERBOSE_TOKENS[role])
    if role == "qa_expert":
        return verbose_qa(group, VERBOSE_TOKENS[role])
    if role == "tech_lead":
        return verbose_tech_lead(group, VERBOSE_TOKENS[role])
    return verbose_pm(group, PM_VERBOSE_TOKENS)


# --- scripted agents -----------------------------------------------------------------


def verbose_agents(data_dir: Path, groups: tuple[str, ...]) -> str:
    """Config lines for one verbose agent per role (``v-developer``, ...): each answers
    a prompt naming ``Group <id>`` with that group's verbose reply."""
    lines = []
    for role in ROLES:
        rules = [
            # the reply has no braces: no placeholder is ever filled in it
            {"match": f"Group {group}\\b", "reply": verbose_reply(role, group)}
            for group in groups
        ]
        script = data_dir / f"v-{role}.json"
        script.write_text(json.dumps({"rules": rules}), encoding="utf-8")
        lines.append(f'[agents.v-{role}]\nrunner = "scripted"\ndelay = 0\nscript = "{script}"\n')
    return "\n".join(lines)


COMPACT_LINES = {  # the seed's example lines (its display-line examples), per group
    "developer": (
        "Implemented {group} authentication with token generation and validation",
        "Created 3 files: jwt_handler.py, auth_middleware.py, test_jwt.py",
        "All 15 tests passing with 92% coverage",
    ),
    "qa_expert": (
        "Tested the {group} implementation",
        "Ran 25 integration/contract/E2E tests",
        "25/25 passed, quality excellent",
    ),
    "tech_lead": (
        "Reviewed the {group} implementation",
        "Checked security, architecture, coverage",
        "Approved, ready for merge",
    ),
    "project_manager": (
        "Tracked group {group} to completion",
        "1 group complete, 0 remaining",
        "BAZINGA",
    ),
}
COMPACT_STATUS = dict(zip(ROLES, ("READY_FOR_QA", "PASS", "APPROVED", "BAZINGA"), strict=True))


def compact_agents(data_dir: Path) -> str:
    """Config lines for one compact agent per role (``c-developer``, ...): each writes its
    hand-off file where its prompt says, then answers the minimal JSON; ``[returns]
    agents`` names them so a chain launches each role as its own agent."""
    lines = []
    for role in ROLES:
        status = COMPACT_STATUS[role]
        handoff = {
            "from_agent": role,
            "status": status,
            "summary": f"{COMPACT_LINES[role][0]}: {status}",
            "session_id": "{session}",
            "group_id": "{group}",
        }
        rule = {
            "match": (
                "(?s).*?(?P<file>\\.delegate/artifacts/(?P<session>[\\w.-]+)/"
                f"(?P<group>[\\w.-]+)/handoffs/handoff_{role}\\.json)"
            ),
            "write": [{"path": "{file}", "content": json.dumps(handoff, indent=2)}],
            "reply": json.dumps({"status": status, "summary": list(COMPACT_LINES[role])}),
        }
        script = data_dir / f"c-{role}.json"
        script.write_text(json.dumps({"rules": [rule]}), encoding="utf-8")
        lines.append(f'[agents.c-{role}]\nrunner = "scripted"\ndelay = 0\nscript = "{script}"\n')
    agents = "\n".join(f'{role} = "c-{role}"' for role in ROLES)
    return "\n".join(lines) + f"\n[returns.agents]\n{agents}\n"


@dataclass
class Figures:
    """Tokens the primary received in one way of running the cycle."""

    returns: list[int] = field(default_factory=list)  # per delegate return
    calls: list[int] = field(default_factory=list)  # per tool response
    said: list[int] = field(default_factory=list)  # the agents' own final messages

    @property
    def cycle(self) -> int:
        return sum(self.calls)


async def full_text(orch: AgentOrchestrator, repo: Path, groups: tuple[str, ...]) -> Figures:
    """Today's ``delegate_agent``: a batch per role, each reply returned whole."""
    figures = Figures()
    for role in ROLES:
        response = await call_tool(
            orch,
            "delegate_agent",
            {
                "agent_id": f"v-{role}",
                "cwd": str(repo),
                "batch": [{"prompt": f"Group {g}: do the {role} work"} for g in groups],
            },
        )
        assert response["status"] == "ok", response
        figures.calls.append(received(response))
        for run in response["runs"]:
            assert run["run_status"] == "completed", run
            figures.returns.append(received(run))
            figures.said.append(count_tokens(run["output"]))
    return figures


async def compact_per_role(orch: AgentOrchestrator, repo: Path, groups: tuple[str, ...]) -> Figures:
    """``agent_role`` launches: a batch of the groups per role, as a primary routing by
    hand would run them; each response the compact returns and their ids."""
    figures = Figures()
    session: str | None = None
    for role in ROLES:
        raw: dict[str, Any] = {
            "agent_id": f"c-{role}",
            "agent_role": role,
            "cwd": str(repo),
            "batch": [{"prompt": f"Group {g}: the {role} work", "group_id": g} for g in groups],
        }
        if session is not None:
            raw["artifacts_session"] = session
        response = await call_tool(orch, "delegate_agent", raw)
        assert response["status"] == "ok", response
        session = response.get("artifacts_session") or response["runs"][0]["artifacts_session"]
        figures.calls.append(received(response))
        for one in response["runs"]:
            assert one["return"]["status"] == COMPACT_STATUS[role], one
            assert "output" not in one
            figures.returns.append(received(one))
            figures.said.append(count_tokens((await orch.get_run(one["run_id"])).output))
    return figures


async def compact_chain(orch: AgentOrchestrator, repo: Path, groups: tuple[str, ...]) -> Figures:
    """One ``"chain": true`` call: delegate runs each group's roles to BAZINGA."""
    response = await call_tool(
        orch,
        "delegate_agent",
        {
            "agent_id": "c-developer",
            "agent_role": "developer",
            "cwd": str(repo),
            "chain": True,
            "batch": [{"prompt": f"Group {g}: build it", "group_id": g} for g in groups],
        },
    )
    assert response["status"] == "ok", response
    figures = Figures(calls=[received(response)])
    steps = [step for group in response["groups"] for step in group["steps"]]
    assert [g["final_status"] for g in response["groups"]] == ["BAZINGA"] * len(groups)
    assert len(steps) == len(groups) * len(ROLES), response
    per_step = received(response) / len(steps)
    figures.returns = [round(per_step)] * len(steps)
    for step in steps:
        figures.said.append(count_tokens((await orch.get_run(step["run_id"])).output))
    return figures


async def run(groups: tuple[str, ...]) -> dict[str, Figures]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        data_dir.mkdir(mode=0o700)
        repo = root / "repo"
        repo.mkdir()
        config = verbose_agents(data_dir, groups) + compact_agents(data_dir)
        (data_dir / "config.toml").write_text(config, encoding="utf-8")
        orch = await AgentOrchestrator.open(data_dir, settings=load_settings(data_dir))
        try:
            return {
                "full text (today)": await full_text(orch, repo, groups),
                "compact, a call per role": await compact_per_role(orch, repo, groups),
                "compact, chain (per step)": await compact_chain(orch, repo, groups),
            }
        finally:
            await orch.close()


def report(groups: tuple[str, ...], figures: dict[str, Figures]) -> None:
    n = len(groups)
    print(
        f"tokens the primary receives, {n} groups x {len(ROLES)} roles"
        f" ({n * len(ROLES)} returns), {os.cpu_count()} cores"
    )
    print(f"{'case':<30} {'per return':>11} {'max':>7} {'agent said':>11} {'per cycle':>10}")
    for name, f in figures.items():
        per = statistics.mean(f.returns) if f.returns else 0
        said = statistics.mean(f.said) if f.said else 0
        print(
            f"{name:<30} {per:>11,.0f} {max(f.returns, default=0):>7,}"
            f" {said:>11,.0f} {f.cycle:>10,}"
        )
    for name, f in figures.items():
        if len(f.calls) == len(ROLES):
            by_role = ", ".join(f"{r} {c:,}" for r, c in zip(ROLES, f.calls, strict=True))
            print(f"  {name}, per call: {by_role}")
    print(
        f"{'seed: ultra-minimal + summary':<30} {SEED_PER_RETURN:>11,} {'':>7} {'':>11}"
        f" {SEED_PER_CYCLE * n // 4:>10,}"
    )
    print(f"{'seed: verbose (current)':<30} {SEED_VERBOSE_PER_RETURN:>11,}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="two groups")
    args = parser.parse_args(argv)
    groups = GROUPS[:2] if args.smoke else GROUPS
    report(groups, asyncio.run(run(groups)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
