"""Launching with a capsule: where it goes in the first prompt, what the launch records,
what it refuses, and the gaps a capsule-launched session reports.

The scripted ``echo`` agent answers with the prompt it received, so its reply is the
prompt as the runner saw it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from capsule_support import body_of, capsule_text, make_repo, save
from support import json_out, run_cli

from core.capsules.drift import reference_for
from core.documents.handoff_registry import digest
from core.documents.prompt import (
    CAPSULE_HEADING,
    InjectedCapsule,
    capsule_gaps,
    compose_launch_prompt,
)
from core.events import CapsuleGap, CapsuleInjected
from core.models import DocumentKind
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


# --- the composer -------------------------------------------------------------


def test_the_composer_puts_the_capsule_after_the_task_and_before_the_guardrails() -> None:
    capsule = InjectedCapsule(
        body="# Mission Snapshot\n- x\n", document_id="d", digest="s", path="p"
    )
    prompt = compose_launch_prompt("Fix the bug.", capsule=capsule, guardrails="Never push.")
    task, block = prompt.index("Fix the bug."), prompt.index(CAPSULE_HEADING)
    body, rules = prompt.index("# Mission Snapshot"), prompt.index("Never push.")
    assert task < block < body < rules
    # The consumption instructions follow the body, before the guardrails.
    assert body < prompt.index("Treat this capsule as authoritative") < rules
    assert compose_launch_prompt("Fix the bug.") == "Fix the bug."


def test_a_gap_is_a_line_that_starts_with_the_marker() -> None:
    reply = (
        "Done.\n- **Capsule Gap:** the schema of the db is not described\nCapsule gap - no tests"
    )
    assert capsule_gaps(reply) == ["the schema of the db is not described", "no tests"]
    # Quoting the instructions (the marker mid-sentence) is no gap.
    quoted = compose_launch_prompt(
        "t", capsule=InjectedCapsule(body="b", document_id="d", digest="s", path="p")
    )
    assert capsule_gaps(quoted) == []


# --- launching ----------------------------------------------------------------


async def test_the_runner_receives_the_capsule_between_the_task_and_the_end(
    orch: AgentOrchestrator, repo: Path
) -> None:
    text = capsule_text()
    path = save(repo, text)
    save(repo, capsule_text().replace("WIDGET-MARKER-7", "OLDER-MARKER"), "20261122T090000Z")

    [handle] = await orch.delegate(
        prompt="Make the app print v2.", agent_id="echo", cwd=str(repo), capsule="latest"
    )
    run = await handle.wait()

    received = run.output  # the echo agent's reply is the prompt it was given
    assert "OLDER-MARKER" not in received  # latest: the newest by timestamp
    task = received.index("Make the app print v2.")
    block = received.index(CAPSULE_HEADING)
    body = received.index("# Mission Snapshot")
    instructions = received.index("Treat this capsule as authoritative")
    assert task < block < body < received.index("WIDGET-MARKER-7") < instructions
    assert "primary_objective" not in received  # the body only, not the front matter

    # Recorded on the run, the session and the registry row; history says so.
    session = await orch.get_session(handle.conversation_id)
    assert session.title == "Make the app print v2."
    assert run.capsule_id is not None
    assert (session.capsule_id, session.capsule_digest) == (run.capsule_id, run.capsule_digest)
    assert run.capsule_digest == digest(body_of(text).strip() + "\n")
    document = await orch.store.documents.get(run.capsule_id)
    assert document.kind is DocumentKind.CAPSULE
    assert Path(document.path) == path
    assert handle.conversation_id in document.consumers
    [injected] = [e for e in await orch.history(20) if isinstance(e, CapsuleInjected)]
    assert (injected.conversation_id, injected.document_id) == (
        handle.conversation_id,
        run.capsule_id,
    )
    assert injected.accepted == ()

    # A second launch with the same capsule uses the same registry row.
    [again] = await orch.delegate(
        prompt="Again.", agent_id="echo", cwd=str(repo), capsule=str(path)
    )
    second = await again.wait()
    assert second.capsule_id == run.capsule_id
    document = await orch.store.documents.get(run.capsule_id)
    assert set(document.consumers) == {handle.conversation_id, again.conversation_id}


async def _refused(orch: AgentOrchestrator, request: dict[str, object]) -> dict[str, object]:
    before = await orch.count_sessions()
    answer = await call_tool(orch, "delegate_agent", json.dumps(request))
    assert answer["status"] == "error", answer
    assert await orch.count_sessions() == before  # nothing started
    error = answer["error"]
    assert isinstance(error, dict)
    return error


async def test_an_over_budget_capsule_is_refused(orch: AgentOrchestrator, repo: Path) -> None:
    save(repo, capsule_text(knowledge="- fact number forty-two is long.\n" * 400))
    request = {"prompt": "go", "agent_id": "echo", "cwd": str(repo), "capsule": "latest"}
    error = await _refused(orch, request)
    assert error["code"] == "capsule_invalid"
    # Where, and each problem with its line and code, as `delegate capsule check` has them.
    assert str(error["path"]).startswith(".delegate/capsules/")
    problems = error["problems"]
    assert isinstance(problems, list)
    assert any(p["code"] == "over_budget" and p["line"] > 0 for p in problems)


async def test_a_capsule_with_a_secret_launches_only_when_allowed(
    orch: AgentOrchestrator, repo: Path
) -> None:
    leaked = "- deploy key: AKIAIOSFODNN7EXAMPLE is the deploy key id"
    path = save(repo, capsule_text(knowledge=leaked))
    request = {"prompt": "go", "agent_id": "echo", "cwd": str(repo), "capsule": str(path)}
    error = await _refused(orch, request)
    assert error["code"] == "capsule_has_secrets"
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(error)  # named by line, never quoted
    # The message says where, readably (a code before a colon would be masked as a name).
    assert "line 23: secret_aws_access_key_id (" in str(error["message"]), error
    assert str(error["message"]).startswith(f"capsule {error['path']} holds what looks like")
    answer = await call_tool(orch, "delegate_agent", json.dumps({**request, "allow_secrets": True}))
    assert answer["status"] == "ok", answer
    [injected] = [e for e in await orch.history(20) if isinstance(e, CapsuleInjected)]
    assert any(code.startswith("secret_") for code in injected.accepted)


async def test_a_stale_capsule_launches_only_when_accepted(
    orch: AgentOrchestrator, repo: Path
) -> None:
    reference = reference_for(repo, "src/app.py")
    references = f"references:\n  - path: {reference.path}\n    blob: {reference.blob}\n"
    save(repo, capsule_text(references=references))
    (repo / "src" / "app.py").write_text("print('v2')\n", encoding="utf-8")
    request = {"prompt": "go", "agent_id": "echo", "cwd": str(repo), "capsule": "latest"}
    error = await _refused(orch, request)
    assert error["code"] == "capsule_stale"
    assert "src/app.py" in error["message"]  # type: ignore[operator]
    answer = await call_tool(orch, "delegate_agent", json.dumps({**request, "accept_stale": True}))
    assert answer["status"] == "ok", answer


async def test_no_capsule_to_find_and_follow_ups_are_refused(
    orch: AgentOrchestrator, repo: Path
) -> None:
    request = {"prompt": "go", "agent_id": "echo", "cwd": str(repo), "capsule": "latest"}
    error = await _refused(orch, request)
    assert error["code"] == "capsule_not_found"
    outside = repo.parent / "elsewhere.md"
    outside.write_text(capsule_text(), encoding="utf-8")
    error = await _refused(orch, {**request, "capsule": str(outside)})
    assert error["code"] == "capsule_path_unsafe"
    answer = await call_tool(
        orch,
        "delegate_agent",
        json.dumps({"conversation_id": "x" * 8, "prompt": "go", "capsule": "latest"}),
    )
    assert answer["error"]["code"] == "invalid_request"  # type: ignore[index]


async def test_a_gap_reported_by_a_capsule_launched_session_is_history(
    data_dir: Path, repo: Path
) -> None:
    script = data_dir / "gappy.toml"
    script.write_text(
        '[[rules]]\nmatch = "(?s).*"\nreply = "Done.\\nCapsule Gap: nothing on the db schema"\n',
        encoding="utf-8",
    )
    with (data_dir / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[agents.gappy]\nrunner = "scripted"\nscript = "{script}"\n')
    save(repo, capsule_text())
    orch = await AgentOrchestrator.open(data_dir)
    try:
        [plain] = await orch.delegate(prompt="go", agent_id="gappy", cwd=str(repo))
        await plain.wait()
        [carried] = await orch.delegate(
            prompt="go", agent_id="gappy", cwd=str(repo), capsule="latest"
        )
        run = await carried.wait()
        gaps = [e for e in await orch.history(20) if isinstance(e, CapsuleGap)]
        assert [(g.conversation_id, g.document_id, g.note) for g in gaps] == [
            (carried.conversation_id, run.capsule_id, "nothing on the db schema")
        ]
        # A later turn of that session that reports a gap is heard too.
        [follow_up] = await orch.delegate(prompt="more", conversation_id=carried.conversation_id)
        later = await follow_up.wait()
        gaps = [e for e in await orch.history(20) if isinstance(e, CapsuleGap)]
        assert [g.run_id for g in gaps] == [later.run_id, run.run_id]  # newest first
    finally:
        await orch.close(wait=False)


def test_delegate_run_capsule_through_the_console_script(data_dir: Path, repo: Path) -> None:
    save(repo, capsule_text())
    args = ("--data-dir", str(data_dir), "run", "--agent", "echo", "--cwd", str(repo))
    done = run_cli(*args, "--capsule", "latest", "--json", "Print v2.", home=data_dir.parent)
    assert done.returncode == 0, done.stderr
    answer = json_out(done)
    assert "injected into its first prompt" in done.stderr
    output = answer["output"]
    assert output.index("Print v2.") < output.index(CAPSULE_HEADING) < output.index("WIDGET")
    shown = run_cli(
        "--data-dir", str(data_dir), "runs", "show", answer["run_id"], home=data_dir.parent
    )
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^capsule \S+ · digest sha256:[0-9a-f]{64}$", shown.stdout, re.MULTILINE)

    leaked = save(repo, capsule_text(knowledge="- key AKIAIOSFODNN7EXAMPLE"), "20261124T000000Z")
    refused = run_cli(*args, "--capsule", str(leaked), "Print v2.", home=data_dir.parent)
    assert refused.returncode != 0
    assert "capsule_has_secrets" in refused.stderr or "--allow-secrets" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = run_cli(
        *args, "--capsule", str(leaked), "--allow-secrets", "Print v2.", home=data_dir.parent
    )
    assert allowed.returncode == 0, allowed.stderr


async def test_a_detached_launch_carries_the_capsule_too(
    orch: AgentOrchestrator, repo: Path
) -> None:
    save(repo, capsule_text())
    [handle] = await orch.delegate(
        prompt="Detached task.", agent_id="echo", cwd=str(repo), capsule="latest", mode="detached"
    )
    run = await handle.wait()  # its worker process ran it
    assert run.output.index("Detached task.") < run.output.index(CAPSULE_HEADING)
    assert run.capsule_id is not None
    session = await orch.get_session(handle.conversation_id)
    assert session.capsule_id == run.capsule_id


async def test_every_launch_of_a_batch_carries_the_capsule(
    orch: AgentOrchestrator, repo: Path
) -> None:
    save(repo, capsule_text())
    request = {
        "batch": [{"prompt": "first part"}, {"prompt": "second part"}],
        "agent_id": "echo",
        "cwd": str(repo),
        "capsule": "latest",
    }
    answer = await call_tool(orch, "delegate_agent", json.dumps(request))
    assert answer["status"] == "ok", answer
    runs = answer["runs"]
    assert isinstance(runs, list)
    for item, task in zip(runs, ("first part", "second part"), strict=True):
        assert item["output"].index(task) < item["output"].index(CAPSULE_HEADING)
    ids = {(await orch.get_run(item["run_id"])).capsule_id for item in runs}
    assert len(ids) == 1  # one capsule, one registry row
    [document_id] = ids
    assert document_id is not None
    document = await orch.store.documents.get(document_id)
    assert set(document.consumers) == {item["conversation_id"] for item in runs}


async def test_the_writers_notes_stay_out_of_the_sub_agents_prompt(
    orch: AgentOrchestrator, repo: Path
) -> None:
    """HTML comments are the writer's (the template's hints, a person's notes to self):
    the sub-agent reads the capsule without them, and the digest is of what it read."""
    text = capsule_text(knowledge="- `src/app.py` prints v1.\n<!-- Files: by path. -->")
    text = text.replace(
        "# Risks & Watchpoints\n",
        "# Risks & Watchpoints\n<!-- a note\n   over two lines <!-- nested? -->\n",
    )
    save(repo, text)
    [handle] = await orch.delegate(
        prompt="Make the app print v2.", agent_id="echo", cwd=str(repo), capsule="latest"
    )
    run = await handle.wait()
    assert "<!--" not in run.output
    assert "-->" not in run.output
    assert "Files: by path" not in run.output
    assert "over two lines" not in run.output
    assert "- `src/app.py` prints v1." in run.output  # the content stays
    assert "- None known." in run.output
    start = run.output.index("# Mission Snapshot")
    injected = run.output[start : run.output.index("Treat this capsule as authoritative")]
    assert run.capsule_digest == digest(injected.rstrip("\n") + "\n")
