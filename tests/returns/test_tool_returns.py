"""``delegate_agent`` with an ``agent_role``: the role's prompt, its judged return, the
compact response (never the delegate's text), and what the launch refuses."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_agents import LINES, eventually, gate_of, make_repo, role_data_dir, shown

from core.config import Settings
from core.detached import GoMessage
from core.errors import InvalidRequest
from core.events import ReturnAccepted, ReturnRejected
from core.models import RunStatus
from core.orchestrator import AgentOrchestrator
from core.returns.launch import repo_relative
from core.returns.model import INVALID_RETURN, AgentRole, RoleLaunch
from core.returns.prompt import PRIOR_HEADING, PROTOCOL_HEADING
from core.tools import call_tool, delegate_sessions

COMPACT_KEYS = {
    "status",
    "run_id",
    "conversation_id",
    "agent_id",
    "artifacts_session",
    "group_id",
    "agent_role",
    "return",
    "next_role",
    "handoff_file",
}


@pytest.fixture
async def orch(tmp_path: Path) -> AsyncIterator[AgentOrchestrator]:
    orchestrator = await AgentOrchestrator.open(role_data_dir(tmp_path))
    yield orchestrator
    await orchestrator.close(wait=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


async def agent(orch: AgentOrchestrator, **request: Any) -> dict[str, Any]:
    return await call_tool(orch, "delegate_agent", request)


async def prompt_of(orch: AgentOrchestrator, run_id: str) -> str:
    return (await orch.get_run(run_id)).prompt


async def test_a_role_launch_answers_its_compact_return_and_never_its_text(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="dev", agent_role="dev", group_id="AUTH", cwd=str(repo)
    )

    assert set(response) == COMPACT_KEYS
    assert response["status"] == "ok"
    assert response["agent_role"] == "developer"
    assert response["group_id"] == "AUTH"
    assert response["artifacts_session"].startswith("crp-")
    assert response["return"] == {
        "status": "READY_FOR_QA",
        "summary": [line.format(group="AUTH") for line in LINES["developer"]],
    }
    assert response["next_role"] == "qa_expert"
    session = response["artifacts_session"]
    # As the prompt names it: relative to the repository root.
    assert response["handoff_file"] == (
        f".delegate/artifacts/{session}/AUTH/handoffs/handoff_developer.json"
    )
    # The details are in the hand-off file, not in what the primary received.
    written = json.loads((repo / response["handoff_file"]).read_text())
    assert written["files_modified"] == ["src/AUTH.py"]
    assert "Reasoning for group AUTH" in written["concerns"][0]
    assert "Reasoning" not in json.dumps(response)
    # The step is recorded and the history says so.
    step = await orch.return_step(response["run_id"])
    assert step is not None
    assert (step.status, step.seq, step.next_role) == ("READY_FOR_QA", 1, "qa_expert")
    accepted = [e for e in await orch.history() if isinstance(e, ReturnAccepted)]
    assert [e.run_id for e in accepted] == [response["run_id"]]
    # The display line is the history's (the primary has the three lines already).
    assert accepted[0].display.endswith(
        "Group AUTH [Developer] | Implemented AUTH | Changed src/AUTH.py and tests"
        " | 15 tests pass → QA Expert"
    )


async def test_the_role_prompt_is_the_task_then_the_protocol(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="dev", agent_role="developer", group_id="AUTH",
        cwd=str(repo),
    )  # fmt: skip

    prompt = await prompt_of(orch, response["run_id"])
    assert prompt.index("Add login.") < prompt.index(PROTOCOL_HEADING)
    assert PRIOR_HEADING not in prompt  # the group's first role reads nothing first
    assert f"`{shown(repo, response['handoff_file'])}`" in prompt
    session = await orch.get_session(response["conversation_id"])
    assert session.title == "Add login."  # the task names the session, not the protocol


async def test_the_next_role_of_the_group_reads_the_previous_hand_off_first(
    orch: AgentOrchestrator, repo: Path
) -> None:
    dev = await agent(
        orch, prompt="Add login.", agent_id="dev", agent_role="developer", group_id="AUTH",
        cwd=str(repo),
    )  # fmt: skip
    qa = await agent(
        orch, prompt="Test login.", agent_id="qa", agent_role="qa", group_id="AUTH",
        artifacts_session=dev["artifacts_session"], cwd=str(repo),
    )  # fmt: skip

    prompt = await prompt_of(orch, qa["run_id"])
    prior = prompt.index(PRIOR_HEADING)
    file = shown(repo, dev["handoff_file"])
    assert prior < prompt.index(f"`{file}`") < prompt.index("Test login.")
    assert qa["return"]["status"] == "PASS"
    assert qa["next_role"] == "tech_lead"
    steps = await orch.store.returns.for_session(dev["artifacts_session"], "AUTH")
    assert [(s.role, s.seq) for s in steps] == [
        (AgentRole.DEVELOPER, 1),
        (AgentRole.QA_EXPERT, 2),
    ]


async def test_a_verbose_return_is_caught_and_its_text_stays_in_the_session(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="verbose-dev", agent_role="developer",
        group_id="AUTH", cwd=str(repo),
    )  # fmt: skip

    assert set(response) == COMPACT_KEYS | {"rule", "reason"}
    assert response["return"]["status"] == INVALID_RETURN
    assert len(response["return"]["summary"]) == 3
    assert response["rule"] in {"verbose", "too_long"}
    assert response["next_role"] is None
    assert "Implementation Complete" not in json.dumps(response)
    # The third line says where the full text is, and it is there.
    assert (
        f"delegate_sessions messages {response['conversation_id']}"
        in (response["return"]["summary"][2])
    )
    messages = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": response["conversation_id"]}
    )
    assert any("## Implementation Complete" in m["content"] for m in messages["messages"])
    rejected = [e for e in await orch.history() if isinstance(e, ReturnRejected)]
    assert [(e.run_id, e.rule) for e in rejected] == [(response["run_id"], response["rule"])]


async def test_a_return_routing_on_without_its_hand_off_file_is_invalid(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="lazy-dev", agent_role="developer",
        group_id="AUTH", cwd=str(repo),
    )  # fmt: skip

    assert response["return"]["status"] == INVALID_RETURN
    assert response["rule"] == "no_handoff"
    assert response["next_role"] is None


async def test_a_failed_run_returns_nothing_valid(orch: AgentOrchestrator, repo: Path) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="broken-dev", agent_role="developer",
        group_id="AUTH", cwd=str(repo),
    )  # fmt: skip

    assert response["return"]["status"] == INVALID_RETURN
    assert response["rule"] == "empty"
    assert "the build exploded" in response["reason"]
    assert "output" not in response


async def test_the_artifacts_session_defaults_to_the_parent_session(
    orch: AgentOrchestrator, repo: Path
) -> None:
    [parent] = await orch.delegate(prompt="I am the primary.", cwd=str(repo))
    await parent.wait()

    response = await agent(
        orch, prompt="Add login.", agent_id="dev", agent_role="developer", group_id="AUTH",
        cwd=str(repo), parent_id=parent.conversation_id[:8],
    )  # fmt: skip

    assert response["artifacts_session"] == parent.conversation_id


async def test_a_batch_launches_one_group_each_in_parallel(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch,
        agent_id="dev",
        agent_role="developer",
        cwd=str(repo),
        artifacts_session="sprint-1",
        batch=[{"prompt": f"Build {g}.", "group_id": g} for g in ("AUTH", "PAY")],
    )

    assert response["status"] == "ok"
    assert [(r["group_id"], r["return"]["status"]) for r in response["runs"]] == [
        ("AUTH", "READY_FOR_QA"),
        ("PAY", "READY_FOR_QA"),
    ]
    assert all(set(r) == COMPACT_KEYS - {"status"} for r in response["runs"])
    for run in response["runs"]:
        assert (repo / run["handoff_file"]).is_file()
        assert run["artifacts_session"] == "sprint-1"


@pytest.mark.parametrize(
    ("request_", "code", "mention"),
    [
        ({"agent_role": "wizard", "group_id": "A"}, "unknown_role", "qa_expert"),
        ({"agent_role": "dev", "group_id": "../x"}, "artifact_id_unsafe", "group id"),
        (
            {"agent_role": "dev", "group_id": "A", "artifacts_session": "a/b"},
            "artifact_id_unsafe",
            "artifacts session",
        ),
        ({"agent_role": "dev", "group_id": "A\0"}, "artifact_id_unsafe", "group id"),
        ({"agent_role": "dev", "group_id": "A" * 300}, "artifact_id_unsafe", "300"),
        (
            {"agent_role": "dev", "group_id": "A", "chain": True, "mode": "detached"},
            "invalid_request",
            "chain",
        ),
        ({"agent_role": "dev"}, "invalid_request", "group_id"),
        ({"group_id": "A"}, "invalid_request", "agent_role"),
        (
            {
                "agent_role": "dev",
                "batch": [{"prompt": "a", "group_id": "A"}, {"prompt": "b", "group_id": "A"}],
            },
            "invalid_request",
            "twice",
        ),
    ],
)  # fmt: skip
async def test_a_bad_role_launch_starts_nothing(
    orch: AgentOrchestrator, repo: Path, request_: dict[str, Any], code: str, mention: str
) -> None:
    task = {} if "batch" in request_ else {"prompt": "x"}
    request_ = {**task, "agent_id": "dev", "cwd": str(repo), **request_}

    response = await agent(orch, **request_)

    assert response["status"] == "error"
    assert response["error"]["code"] == code
    assert mention in response["error"]["message"]
    assert await orch.list_runs() == []
    assert not (repo / ".delegate").exists()


async def test_roles_are_for_launches_one_per_launch(orch: AgentOrchestrator, repo: Path) -> None:
    launch = RoleLaunch(AgentRole.DEVELOPER, "s1", "AUTH")
    with pytest.raises(InvalidRequest, match="one per launch"):
        await orch.delegate(prompt="x", agent_id="dev", cwd=str(repo), roles=[launch, launch])
    with pytest.raises(InvalidRequest, match="follow-up"):
        await orch.delegate(prompt="x", conversation_id="c1", roles=[launch])
    assert await orch.list_runs() == []


async def test_a_run_launched_without_a_role_has_no_step(
    orch: AgentOrchestrator, repo: Path
) -> None:
    [handle] = await orch.delegate(prompt="hello", cwd=str(repo))
    await handle.wait()
    assert await orch.return_step(handle.run_id) is None


async def test_a_detached_role_run_is_judged_by_its_worker_before_wait_returns(
    orch: AgentOrchestrator, repo: Path
) -> None:
    launch = RoleLaunch(AgentRole.DEVELOPER, "s-detached", "AUTH")
    [handle] = await orch.delegate(
        prompt="Add login.", agent_id="dev", cwd=str(repo), mode="detached", roles=[launch]
    )

    run = await handle.wait()

    assert run.status is RunStatus.COMPLETED
    step = await orch.return_step(handle.run_id)
    assert step is not None
    assert (step.status, step.next_role) == ("READY_FOR_QA", "qa_expert")
    assert (repo / ".delegate/artifacts/s-detached/AUTH/handoffs/handoff_developer.json").is_file()
    accepted = [e for e in await orch.history() if isinstance(e, ReturnAccepted)]
    assert [e.run_id for e in accepted] == [handle.run_id]


async def test_a_detached_role_launch_through_the_tool_answers_at_once(
    orch: AgentOrchestrator, repo: Path
) -> None:
    response = await agent(
        orch, prompt="Add login.", agent_id="dev", agent_role="developer", group_id="AUTH",
        cwd=str(repo), mode="detached",
    )  # fmt: skip

    assert response["status"] == "ok"
    assert response["run_status"] == "running"
    assert "return" not in response
    # Its worker records the return when the run ends.
    step = await eventually(lambda: orch.return_step(response["run_id"]), "the return")
    assert step.status == "READY_FOR_QA"


@pytest.mark.parametrize("how", ["stopped", "killed"])
async def test_a_detached_role_run_that_never_answers_is_an_empty_return(
    orch: AgentOrchestrator, repo: Path, tmp_path: Path, how: str
) -> None:
    launch = RoleLaunch(AgentRole.DEVELOPER, "s-stop", "AUTH")
    [handle] = await orch.delegate(
        prompt="Add login.", agent_id="gated-dev", cwd=str(repo), mode="detached", roles=[launch]
    )

    async def half_way() -> str | None:  # held at its gate, half way through its answer
        return (await orch.get_run(handle.run_id)).live_output

    await eventually(half_way, "the first word")

    if how == "stopped":
        handle.cancel()  # the worker stores the run cancelled, then judges it
    else:
        pid = (await orch.get_run(handle.run_id)).owner_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # the worker is gone: its caller records the return
    run = await handle.wait()

    assert run.status in {RunStatus.CANCELLED, RunStatus.INTERRUPTED}
    step = await orch.return_step(handle.run_id)
    assert step is not None
    assert (step.status, step.rule, step.next_role) == (INVALID_RETURN, "empty", None)
    assert run.status.value in step.reason
    assert not gate_of(tmp_path).exists()


async def test_a_planted_link_at_the_artifacts_folder_starts_nothing(
    orch: AgentOrchestrator, repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".delegate").symlink_to(elsewhere)

    response = await agent(
        orch, prompt="x", agent_id="dev", agent_role="developer", group_id="AUTH", cwd=str(repo)
    )

    assert response["status"] == "error"
    assert response["error"]["code"] == "document_invalid"
    assert "symbolic link" in response["error"]["message"]
    assert await orch.list_runs() == []
    assert list(elsewhere.iterdir()) == []


_HOSTILE = st.one_of(
    st.text(max_size=80),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,70}", fullmatch=True),
    st.sampled_from(["..", ".", "../up", "a/b", "a\\b", "-rf", "a\0", "CON", "x" * 65, " A"]),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(group=_HOSTILE, session=st.one_of(st.none(), _HOSTILE))
async def test_no_hostile_id_lands_anywhere_but_its_own_folder(
    orch: AgentOrchestrator, repo: Path, group: str, session: str | None
) -> None:
    request: dict[str, Any] = {"prompt": "x", "agent_id": "dev", "agent_role": "developer"}
    request.update(group_id=group, cwd=str(repo))
    if session is not None:
        request["artifacts_session"] = session

    response = await agent(orch, **request)

    if response["status"] == "error":
        assert response["error"]["code"] in {"artifact_id_unsafe", "invalid_request"}
        return
    artifacts = (repo / ".delegate" / "artifacts").resolve()
    handoff = repo / response["handoff_file"]
    assert handoff.resolve().is_relative_to(artifacts)
    assert handoff.parent.parent.name == response["group_id"] == group
    assert sorted(p.name for p in repo.iterdir()) == [".delegate", ".git"]


async def test_an_invalid_return_is_no_hand_off_for_the_next_role(
    orch: AgentOrchestrator, repo: Path
) -> None:
    dev = await agent(
        orch, prompt="Add login.", agent_id="verbose-dev", agent_role="developer",
        group_id="AUTH", cwd=str(repo),
    )  # fmt: skip
    assert dev["return"]["status"] == INVALID_RETURN

    qa = await agent(
        orch, prompt="Test login.", agent_id="qa", agent_role="qa_expert", group_id="AUTH",
        artifacts_session=dev["artifacts_session"], cwd=str(repo),
    )  # fmt: skip

    assert PRIOR_HEADING not in await prompt_of(orch, qa["run_id"])
    previous = await orch.previous_handoff(dev["artifacts_session"], "AUTH")
    assert previous == (AgentRole.QA_EXPERT, str(repo.resolve() / qa["handoff_file"]))


def test_the_go_message_carries_the_role_to_the_worker() -> None:
    previous = (AgentRole.DEVELOPER, ".delegate/artifacts/s/A/handoffs/handoff_developer.json")
    launch = RoleLaunch(AgentRole.QA_EXPERT, "s", "A", previous)
    go = GoMessage("r1", Settings(), "/tmp", 1, 0, role=launch)

    assert GoMessage.decode(go.encode()).role == launch
    assert GoMessage.decode(dataclasses.replace(go, role=None).encode()).role is None
    raw = json.loads(go.encode())
    raw["role"]["role"] = "wizard"
    with pytest.raises(ValueError, match="malformed go message"):
        GoMessage.decode(json.dumps(raw).encode())


_FILE = ".delegate/artifacts/s/G/handoffs/handoff_qa_expert.json"


@pytest.mark.parametrize(
    ("recorded", "shown_as"),
    [
        (f"/r/{_FILE}", _FILE),
        (f"/a/.delegate/artifacts/x/{_FILE}", _FILE),  # the last one names the session
        ("/elsewhere/h.json", "/elsewhere/h.json"),
    ],
)
def test_a_hand_off_path_is_answered_from_the_repository_root(recorded: str, shown_as: str) -> None:
    assert repo_relative(recorded) == shown_as
