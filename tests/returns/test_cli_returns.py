"""``delegate returns ...`` through the real console script, on a real git repository."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from chain_agents import chain_config, git_repo, role_rule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import json_out, run_cli, write_config
from tool_agents import make_repo, role_data_dir

from core.orchestrator import AgentOrchestrator
from core.returns.files import write_handoff
from core.returns.model import AgentRole, RoleLaunch
from core.returns.parse import parse_return
from core.returns.paths import group_paths
from core.returns.registry import record_return
from core.returns.routing import Routes
from tui.cli import main

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}
SESSION = "crp-test-1"
SUMMARY = [
    "Implemented JWT authentication",
    "Created 3 files: jwt.py, middleware.py, test_jwt.py",
    "15 tests passing, 92% coverage",
]


def _repo(root: Path) -> Path:
    """A git repository with one commit and a ``src`` folder."""
    repo = root / "project"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "auth.py").write_text("def login():\n    return True\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)
    return repo


def _cli(data: Path, *args: str, cwd: Path, stdin: str | None = None, code: int = 0) -> Any:
    """``delegate --data-dir DATA ARGS`` (they end in ``--json``): exit ``code``, its JSON."""
    result = run_cli("--data-dir", str(data), *args, home=cwd, stdin=stdin)
    assert result.returncode == code, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    return json_out(result)


def _developer_file(**changes: Any) -> dict[str, Any]:
    handoff: dict[str, Any] = {
        "from_agent": "developer",
        "to_agent": "qa_expert",
        "status": "READY_FOR_QA",
        "summary": "Implemented JWT auth with 3 endpoints, 15 tests passing",
        "session_id": SESSION,
        "group_id": "AUTH",
        "files_modified": ["src/auth.py"],
        "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
        "branch": "feature/group-AUTH",
        "reviewer_note": "kept: a key the schema does not name",
    }
    handoff.update(changes)
    return handoff


def _compact(status: str = "READY_FOR_QA", summary: list[str] | None = None) -> str:
    return json.dumps({"status": status, "summary": summary or SUMMARY})


def _main(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    stdin: str = "",
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8"))))
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return code, json.loads(out.out)


# --- write ------------------------------------------------------------------


def test_write_puts_a_valid_file_where_the_next_role_reads_it_and_registers_it(
    tmp_path: Path,
) -> None:
    data = write_config(tmp_path / "data")
    repo = _repo(tmp_path)
    source = tmp_path / "handoff.json"
    source.write_text(json.dumps(_developer_file()), encoding="utf-8")

    # From a folder inside the repository: the artifacts go to its root.
    written = _cli(
        data,
        "returns", "write", "--agent", "dev", "--session", SESSION, "--group", "AUTH",
        "--file", str(source), "--json",
        cwd=repo / "src",
    )  # fmt: skip
    target = repo / ".delegate/artifacts" / SESSION / "AUTH/handoffs/handoff_developer.json"
    assert Path(written["handoff_file"]) == target
    assert written["relative"] == target.relative_to(repo).as_posix()
    assert written["agent_role"] == "developer"
    assert written["artifacts_session"] == SESSION
    assert written["group_id"] == "AUTH"
    assert written["handoff_status"] == "READY_FOR_QA"
    assert written["document_id"]
    assert json.loads(target.read_text(encoding="utf-8")) == _developer_file()
    assert not list(target.parent.glob(".delegate-*.tmp"))  # nothing half-written left

    # stdin, into another repository named by --cwd; the QA's file beside the developer's.
    qa = {
        "from_agent": "qa_expert",
        "status": "PASS",
        "summary": "Ran 25 tests, all passed",
        "total_tests": {"passed": 25, "failed": 0},
    }
    other = _cli(
        data,
        "returns", "write", "--agent", "qa", "--session", SESSION, "--group", "AUTH",
        "--file", "-", "--cwd", str(repo), "--json",
        cwd=tmp_path, stdin=json.dumps(qa),
    )  # fmt: skip
    assert Path(other["handoff_file"]) == target.with_name("handoff_qa_expert.json")
    assert other["document_id"] != written["document_id"]

    plain = run_cli(
        "--data-dir", str(data),
        "returns", "write", "--agent", "developer", "--session", SESSION, "--group", "PAY",
        "--file", str(source),
        home=repo,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip() == (
        f"hand-off written: .delegate/artifacts/{SESSION}/PAY/handoffs/handoff_developer.json"
    )


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (json.dumps(_developer_file(status="PASS")), "status"),  # a QA status, not a developer's
        (json.dumps(_developer_file(from_agent="qa_expert")), "from_agent"),
        (json.dumps(_developer_file(tests={"total": -1})), "tests.total"),
        ('{"from_agent": "developer", "status": ', "not JSON"),
        ('{"from_agent": "developer", "status": NaN}', "not JSON"),
        ("[1, 2]", "one JSON object"),
    ],
    ids=["wrong_status", "wrong_role", "bad_count", "not_json", "nan", "not_an_object"],
)
def test_write_refuses_an_invalid_file_and_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    content: str,
    named: str,
) -> None:
    data = str(write_config(tmp_path / "data"))
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    source = tmp_path / "handoff.json"
    source.write_text(content, encoding="utf-8")
    args = ["returns", "write", "--agent", "developer", "--session", SESSION, "--group", "AUTH"]

    assert main(["--data-dir", data, *args, "--file", str(source)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"delegate: handoff_file_invalid: {source}"), err
    assert named in err
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err
    assert not (repo / ".delegate").exists()

    code, answer = _main(capsys, monkeypatch, "--data-dir", data, *args, "--file", "-",
                         "--json", stdin=content)  # fmt: skip
    assert code == 1
    assert answer["status"] == "error"
    assert answer["error"]["code"] == "handoff_file_invalid"
    assert answer["error"]["message"].startswith("stdin")
    assert not (repo / ".delegate").exists()


def test_an_invalid_file_through_the_console_script_is_one_line_and_exit_1(
    tmp_path: Path,
) -> None:
    data = write_config(tmp_path / "data")
    repo = _repo(tmp_path)
    result = run_cli(
        "--data-dir", str(data),
        "returns", "write", "--agent", "developer", "--session", SESSION, "--group", "AUTH",
        "--file", "-",
        home=repo, stdin=json.dumps(_developer_file(status="PASS")),
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("delegate: handoff_file_invalid: stdin "), result.stderr
    assert "status" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert result.stdout == ""
    assert not (repo / ".delegate").exists()


def test_write_refuses_a_file_that_is_not_a_regular_file(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = _repo(tmp_path)
    base = ["returns", "write", "--agent", "developer", "--session", SESSION, "--group", "AUTH"]
    missing = _cli(data, *base, "--file", str(tmp_path / "nope.json"), "--json", cwd=repo, code=1)
    assert missing["error"]["code"] == "handoff_file_invalid"
    folder = _cli(data, *base, "--file", str(tmp_path), "--json", cwd=repo, code=1)
    assert folder["error"]["code"] == "handoff_file_invalid"
    assert not (repo / ".delegate").exists()


# --- unsafe ids, unknown roles: typed errors, in process ---------------------


UNSAFE_IDS = ["../x", "-rf", "a/b", "a\\b", "..", "x" * 300, "a\x00b", "", " AUTH"]


@pytest.mark.parametrize("bad", UNSAFE_IDS, ids=repr)
def test_unsafe_ids_are_refused_by_every_command_with_nothing_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bad: str,
) -> None:
    data = str(write_config(tmp_path / "data"))
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    source = tmp_path / "handoff.json"
    source.write_text(json.dumps(_developer_file()), encoding="utf-8")
    write = ["returns", "write", "--agent", "developer", "--file", str(source), "--json"]
    prompt = ["returns", "prompt", "--agent", "qa", "--json"]
    attempts = [
        [*write, f"--session={bad}", "--group=AUTH"],
        [*write, f"--session={SESSION}", f"--group={bad}"],
        [*prompt, f"--session={bad}", "--group=AUTH"],
        [*prompt, f"--session={SESSION}", f"--group={bad}"],
        ["returns", "show", "--json", "--", bad],
        ["returns", "show", "--json", f"--group={bad}", SESSION],
        ["returns", "clean", "--json", "--", bad],
    ]
    for args in attempts:
        code, answer = _main(capsys, monkeypatch, "--data-dir", data, *args)
        assert code == 1, args
        assert answer["error"]["code"] == "artifact_id_unsafe", (args, answer)
    code, answer = _main(
        capsys, monkeypatch, "--data-dir", data, "returns", "parse", "--agent", "dev",
        f"--group={bad}", "--json", stdin=_compact(),
    )  # fmt: skip
    assert (code, answer["error"]["code"]) == (1, "artifact_id_unsafe")
    assert not (repo / ".delegate").exists()


def test_an_unknown_role_is_a_typed_error_listing_the_roles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = str(write_config(tmp_path / "data"))
    monkeypatch.chdir(_repo(tmp_path))
    for args in (
        ["returns", "prompt", "--agent", "wizard", "--session", SESSION, "--group", "AUTH"],
        ["returns", "prompt", "--agent", "qa", "--previous", "wizard", "--session", SESSION,
         "--group", "AUTH"],
        ["returns", "parse", "--agent", "wizard"],
    ):  # fmt: skip
        code, answer = _main(capsys, monkeypatch, "--data-dir", data, *args, "--json")
        assert code == 1
        assert answer["error"]["code"] == "unknown_role"
        assert "qa_expert" in answer["error"]["message"]

    code = main(["--data-dir", data, "returns", "parse", "--agent", "wizard"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("delegate: unknown_role: ")
    assert len(err.splitlines()) == 1


# --- parse ------------------------------------------------------------------


def test_parse_judges_a_final_message_and_routes_it(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    parse = ["returns", "parse", "--agent", "developer", "--group", "AUTH", "--json"]

    valid = _cli(data, *parse, cwd=tmp_path, stdin=_compact())
    assert valid["status"] == "ok"
    assert valid["valid"] is True
    assert valid["agent_role"] == "developer"
    assert valid["return"] == {"status": "READY_FOR_QA", "summary": SUMMARY}
    assert valid["next_role"] == "qa_expert"
    assert valid["rule"] is None
    assert 0 < valid["tokens"] < 150
    assert valid["display"] == (
        "🔨 Group AUTH [Developer] | " + " | ".join(SUMMARY) + " → QA Expert"
    )

    fenced = _cli(data, *parse, cwd=tmp_path, stdin=f"```json\n{_compact()}\n```\n")
    assert fenced["valid"] is True
    assert fenced["return"] == valid["return"]

    verbose_text = "## Implementation Complete\n\nI did a lot of things.\n\n" + _compact()
    verbose = _cli(data, *parse, cwd=tmp_path, stdin=verbose_text, code=1)
    assert verbose["status"] == "invalid"
    assert verbose["valid"] is False
    assert verbose["rule"] == "verbose"
    assert verbose["reason"]
    assert verbose["return"]["status"] == "INVALID_RETURN"
    assert len(verbose["return"]["summary"]) == 3
    assert verbose["next_role"] is None
    assert verbose["display"].endswith("→ stop")

    # PASS is the QA expert's status, never a developer's.
    wrong = _cli(data, *parse, cwd=tmp_path, stdin=_compact("PASS"), code=1)
    assert wrong["rule"] == "status"
    assert "PASS" in wrong["reason"]

    # Routing follows the role: a tech lead's APPROVED goes to the PM; a config route
    # for one role beats the plain status.
    approved = _cli(
        data, "returns", "parse", "--agent", "tl", "--json", cwd=tmp_path,
        stdin=_compact("APPROVED"),
    )  # fmt: skip
    assert approved["next_role"] == "project_manager"
    assert approved["display"].startswith("👔 Group - [TL] | ")

    # No --agent: the first role whose statuses hold it.
    anyone = _cli(data, "returns", "parse", "--json", cwd=tmp_path, stdin=_compact("PASS"))
    assert anyone["valid"] is True
    assert anyone["agent_role"] is None
    assert anyone["next_role"] == "tech_lead"


def test_parse_follows_the_configured_routes_and_says_so_in_words(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data", '\n[returns.routes]\n"tech_lead:APPROVED" = "end"\n')
    ended = run_cli(
        "--data-dir", str(data), "returns", "parse", "--agent", "tl", "--group", "AUTH",
        home=tmp_path, stdin=_compact("APPROVED"),
    )  # fmt: skip
    assert ended.returncode == 0, ended.stderr
    first, second = ended.stdout.splitlines()
    assert first.startswith("valid: tech_lead APPROVED · ")
    assert first.endswith(" · next: end")
    assert second.startswith("👔 Group AUTH [TL] | ")
    assert second.endswith("→ end")

    broken = run_cli(
        "--data-dir", str(data), "returns", "parse", "--agent", "qa",
        home=tmp_path, stdin="All 25 tests passed, looks great!",
    )  # fmt: skip
    assert broken.returncode == 1
    assert broken.stdout.startswith("invalid: not_json: ")
    assert broken.stdout.splitlines()[1].endswith("→ stop")


_FINALS = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda status, lines, before, after: (
            before + json.dumps({"status": status, "summary": lines}) + after
        ).encode("utf-8"),
        st.sampled_from(["PASS", "FAIL", "READY_FOR_QA", "BAZINGA", "pass", ""]),
        st.lists(st.text(max_size=40), max_size=4),
        st.sampled_from(["", "```json\n", "Done!\n", "\ufeff"]),
        st.sampled_from(["", "\n```", "\nthanks", "{}"]),
    ),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(final=_FINALS)
def test_parse_answers_any_final_message_with_a_verdict_never_a_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    final: bytes,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(final)))
    code = main(["--data-dir", str(tmp_path / "d"), "returns", "parse", "--agent", "qa", "--json"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    answer = json.loads(out.out)
    if answer.get("status") == "error":  # stdin that is not UTF-8 text
        assert code == 1
        assert answer["error"]["code"] == "invalid_request"
        return
    assert code == (0 if answer["valid"] else 1)
    assert len(answer["return"]["summary"]) == 3
    assert "\n" not in answer["display"]
    if answer["valid"]:
        assert answer["return"]["status"] in {"PASS", "FAIL", "BLOCKED", "FLAKY"}
    else:
        assert answer["return"]["status"] == "INVALID_RETURN"
        assert answer["rule"]
        assert answer["next_role"] is None


# --- prompt -----------------------------------------------------------------


def test_prompt_prints_the_protocol_sections_with_the_groups_paths(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = _repo(tmp_path)
    handoffs = f".delegate/artifacts/{SESSION}/AUTH/handoffs"

    qa = _cli(
        data,
        "returns", "prompt", "--agent", "qa", "--session", SESSION, "--group", "AUTH",
        "--previous", "developer", "--json",
        cwd=repo / "src",
    )  # fmt: skip
    assert qa["agent_role"] == "qa_expert"
    assert qa["handoff_file"] == str(repo / handoffs / "handoff_qa_expert.json")
    assert qa["relative"] == f"{handoffs}/handoff_qa_expert.json"
    assert qa["previous"] == {
        "agent_role": "developer",
        "handoff_file": str(repo / handoffs / "handoff_developer.json"),
        "relative": f"{handoffs}/handoff_developer.json",
    }
    text = qa["text"]
    assert text.index("Prior Agent Handoff") < text.index("Handoff Protocol")
    assert f"{handoffs}/handoff_developer.json" in text
    assert f"{handoffs}/handoff_qa_expert.json" in text
    for status in ("PASS", "FAIL", "BLOCKED", "FLAKY"):
        assert status in text
    assert not (repo / ".delegate").exists()  # printing a prompt writes nothing

    plain = run_cli(
        "--data-dir", str(data),
        "returns", "prompt", "--agent", "developer", "--session", SESSION, "--group", "AUTH",
        home=repo,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert "Prior Agent Handoff" not in plain.stdout
    assert f"{handoffs}/handoff_developer.json" in plain.stdout
    assert "READY_FOR_QA" in plain.stdout


# --- show and clean -----------------------------------------------------------


async def _record(
    data: Path, repo: Path, group: str, role: AgentRole, final: str, handoff: dict[str, Any] | None
) -> None:
    """One role's step as a run records it: its hand-off file (if any), its judged return."""
    orch = await AgentOrchestrator.open(data)
    try:
        paths = group_paths(repo, SESSION, group)
        if handoff is not None:
            write_handoff(paths, role, handoff)
        parsed = parse_return(final, role, max_tokens=400, conversation_id="c-1")
        routes = Routes.from_settings(orch.settings.returns)
        next_role = routes.next_role(role, parsed.answer.status) if parsed.valid else None
        launch = RoleLaunch(role, SESSION, group)
        await record_return(
            orch.store,
            paths=paths,
            launch=launch,
            parsed=parsed,
            next_role=next_role,
            run_id=None,
            conversation_id="c-1",
            now=orch.clock(),
        )
    finally:
        await orch.close()


async def test_show_lists_each_groups_chain_and_clean_removes_files_and_rows(
    tmp_path: Path,
) -> None:
    data = write_config(tmp_path / "data")
    repo = _repo(tmp_path)
    qa_file = {"from_agent": "qa_expert", "status": "PASS", "summary": "25 tests passed"}
    await _record(data, repo, "AUTH", AgentRole.DEVELOPER, _compact(), _developer_file())
    await _record(data, repo, "AUTH", AgentRole.QA_EXPERT, _compact("PASS"), qa_file)
    await _record(data, repo, "PAY", AgentRole.DEVELOPER, "Done! " + _compact(), None)

    shown = _cli(data, "returns", "show", SESSION, "--json", cwd=tmp_path)
    assert shown["artifacts_session"] == SESSION
    auth, pay = shown["groups"]
    assert auth["group_id"] == "AUTH"
    assert auth["roles"] == ["developer", "qa_expert"]
    assert auth["state"] == "next: tech_lead"
    developer, qa = auth["steps"]
    assert (developer["seq"], developer["status"], developer["summary"]) == (
        1,
        "READY_FOR_QA",
        SUMMARY,
    )
    assert developer["next_role"] == "qa_expert"
    handoffs = repo / ".delegate/artifacts" / SESSION / "AUTH/handoffs"
    assert developer["handoff_file"] == str(handoffs / "handoff_developer.json")
    assert developer["document_id"]
    assert qa["document_id"]
    assert developer["display"].endswith("→ QA Expert")
    assert qa["display"].startswith("✅ Group AUTH [QA] | ")
    assert qa["display"].endswith("→ Tech Lead")
    assert pay["state"] == "stopped: invalid return"
    [broken] = pay["steps"]
    assert (broken["status"], broken["rule"], broken["next_role"]) == (
        "INVALID_RETURN",
        "verbose",
        None,
    )
    assert broken["display"].endswith("→ stop")
    assert shown["lines"] == [developer["display"], qa["display"], broken["display"]]

    only = _cli(data, "returns", "show", SESSION, "--group", "PAY", "--json", cwd=tmp_path)
    assert [g["group_id"] for g in only["groups"]] == ["PAY"]

    sessions = _cli(data, "returns", "show", "--json", cwd=tmp_path)["sessions"]
    assert [(s["artifacts_session"], s["groups"], s["steps"]) for s in sessions] == [
        (SESSION, 2, 3)
    ]
    assert sessions[0]["ended"] is False  # AUTH still routes on to the tech lead

    text = run_cli("--data-dir", str(data), "returns", "show", SESSION, home=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "group AUTH · developer -> qa_expert (next: tech_lead)"
    assert lines[1].startswith("  1. 🔨 Group AUTH [Developer] | ")
    assert f"     hand-off: {handoffs / 'handoff_developer.json'}" in lines
    assert "group PAY · developer (stopped: invalid return)" in lines
    assert any(line.startswith("     rule broken: verbose: ") for line in lines)

    unknown = _cli(data, "returns", "show", "crp-nothing", "--json", cwd=tmp_path, code=1)
    assert unknown["error"]["code"] == "return_group_unknown"

    cleaned = _cli(data, "returns", "clean", SESSION, "--json", cwd=repo)
    assert cleaned["status"] == "ok"
    assert cleaned["folders"] == [str(repo / ".delegate/artifacts" / SESSION)]
    assert (cleaned["steps"], cleaned["documents"]) == (3, 2)
    assert not (repo / ".delegate/artifacts" / SESSION).exists()
    gone = _cli(data, "returns", "show", SESSION, "--json", cwd=tmp_path, code=1)
    assert gone["error"]["code"] == "return_group_unknown"

    again = run_cli("--data-dir", str(data), "returns", "clean", SESSION, home=repo)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"nothing to clean for artifacts session {SESSION}"


# --- delegate run --role --------------------------------------------------------


def test_run_with_a_role_prints_its_display_line_never_its_reply(tmp_path: Path) -> None:
    data = role_data_dir(tmp_path)
    repo = make_repo(tmp_path)
    base = ["--data-dir", str(data), "run", "--cwd", str(repo), "--artifacts-session", SESSION]

    dev = run_cli(*base, "--agent", "dev", "--role", "developer", "--group", "AUTH",
                  "Implement AUTH", home=tmp_path)  # fmt: skip
    assert dev.returncode == 0, dev.stderr
    assert dev.stdout.splitlines() == [
        "🔨 Group AUTH [Developer] | Implemented AUTH | Changed src/AUTH.py and tests"
        " | 15 tests pass → QA Expert"
    ]
    assert f"as developer of group AUTH in artifacts session {SESSION}" in dev.stderr
    relative = f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json"
    assert f"hand-off: {relative}" in dev.stderr  # as prompts name it: from the repo root
    handoff = repo / relative
    assert "Reasoning for group AUTH" in handoff.read_text(encoding="utf-8")
    assert "Reasoning" not in dev.stdout + dev.stderr  # the details stay in the file

    # The next role, into the same session and group: it reads the developer's file first.
    qa = _cli(data, *base[2:], "--agent", "qa", "--role", "qa", "--group", "AUTH", "--json",
              "Test AUTH", cwd=tmp_path)  # fmt: skip
    assert qa["return"] == {
        "status": "PASS",
        "summary": ["Tested AUTH", "Ran 25 integration tests", "25/25 passed"],
    }
    assert (qa["agent_role"], qa["group_id"], qa["artifacts_session"]) == (
        "qa_expert",
        "AUTH",
        SESSION,
    )
    assert qa["next_role"] == "tech_lead"
    assert "output" not in qa
    shown = _cli(data, "sessions", "show", qa["conversation_id"], "--json", cwd=tmp_path)
    [prompt] = [m["content"] for m in shown["messages"] if m["role"] == "user"]
    assert prompt.index("Prior Agent Handoff") < prompt.index("Test AUTH")
    assert f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json" in prompt

    steps = _cli(data, "returns", "show", SESSION, "--json", cwd=tmp_path)
    [auth] = steps["groups"]
    assert auth["roles"] == ["developer", "qa_expert"]
    assert [s["run_id"] for s in auth["steps"]][1] == qa["run_id"]


def test_run_with_a_role_a_long_return_is_caught_and_exit_1(tmp_path: Path) -> None:
    data = role_data_dir(tmp_path)
    repo = make_repo(tmp_path)
    verbose = run_cli(
        "--data-dir", str(data), "run", "--cwd", str(repo), "--agent", "verbose-dev",
        "--role", "dev", "--group", "PAY", "Implement PAY",
        home=tmp_path,
    )  # fmt: skip
    assert verbose.returncode == 1
    [line] = verbose.stdout.splitlines()
    assert line.startswith("⛔ Group PAY [Developer] | ")
    assert line.endswith("→ stop")
    # The seed's old verbose report: thousands of tokens, never passed on.
    assert "invalid return (too_long): " in verbose.stderr
    assert "Implementation Complete" not in verbose.stdout
    # A new artifacts session was made, and said.
    assert "in artifacts session crp-" in verbose.stderr


def test_run_role_flags_are_checked_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = str(role_data_dir(tmp_path))
    repo = make_repo(tmp_path)
    base = ["--data-dir", data, "run", "--cwd", str(repo), "--agent", "dev", "--json"]
    refused = {
        "invalid_request": [
            ["--group", "AUTH"],
            ["--chain"],
            ["--artifacts-session", SESSION],
            ["--role", "dev"],
            ["--role", "dev", "--group", "AUTH", "--session", "abc123"],
            ["--role", "dev", "--group", "AUTH", "--chain", "--detached"],
        ],
        "artifact_id_unsafe": [
            ["--role", "dev", "--group=../x"],
            ["--role", "dev", "--group", "AUTH", "--artifacts-session=-rf"],
        ],
        "unknown_role": [["--role", "wizard", "--group", "AUTH"]],
    }
    for code, cases in refused.items():
        for flags in cases:
            exit_code, answer = _main(capsys, monkeypatch, *base, *flags, "go")
            assert exit_code == 1, flags
            assert answer["error"]["code"] == code, (flags, answer)
    assert not (repo / ".delegate").exists()
    exit_code, listing = _main(capsys, monkeypatch, "--data-dir", data, "sessions", "list",
                               "--json")  # fmt: skip
    assert exit_code == 0
    assert listing["sessions"] == []  # nothing started


def test_run_detached_with_a_role_answers_its_ids_and_its_worker_records_the_return(
    tmp_path: Path,
) -> None:
    data = role_data_dir(tmp_path)
    repo = make_repo(tmp_path)
    started = _cli(
        data, "run", "--detached", "--json", "--cwd", str(repo), "--agent", "dev",
        "--role", "dev", "--group", "AUTH", "--artifacts-session", SESSION, "Implement AUTH",
        cwd=tmp_path,
    )  # fmt: skip
    assert started["status"] == "ok"
    assert started["run_status"] == "running"
    assert (started["agent_role"], started["group_id"], started["artifacts_session"]) == (
        "developer",
        "AUTH",
        SESSION,
    )
    assert "return" not in started  # not judged yet: its worker records it when it ends

    deadline = time.monotonic() + 60
    while True:
        shown = run_cli("--data-dir", str(data), "returns", "show", SESSION, "--json",
                        home=tmp_path)  # fmt: skip
        if shown.returncode == 0:
            break
        assert json_out(shown)["error"]["code"] == "return_group_unknown"
        assert time.monotonic() < deadline, "the detached run's return was never recorded"
        time.sleep(0.2)
    [step] = json_out(shown)["groups"][0]["steps"]
    assert (step["run_id"], step["status"], step["next_role"]) == (
        started["run_id"],
        "READY_FOR_QA",
        "qa_expert",
    )


# --- delegate run --role --chain ------------------------------------------------


def test_run_chain_runs_each_role_to_the_end_one_line_per_step(tmp_path: Path) -> None:
    data = chain_config(tmp_path / "data", {})
    repo = git_repo(tmp_path / "repo")
    chain = ["--data-dir", str(data), "run", "--cwd", str(repo), "--agent", "dev-bot",
             "--role", "dev", "--group", "AUTH", "--chain"]  # fmt: skip

    result = run_cli(*chain, "--artifacts-session", SESSION, "Implement AUTH", home=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(" | ")[0] for line in lines] == [
        "🔨 Group AUTH [Developer]",
        "✅ Group AUTH [QA]",
        "👔 Group AUTH [TL]",
        "🎉 Group AUTH [PM]",
    ]
    assert [line.rsplit(" → ", 1)[1] for line in lines] == [
        "QA Expert",
        "Tech Lead",
        "Project Manager",
        "end",
    ]
    assert f"artifacts session {SESSION}" in result.stderr
    shown = _cli(data, "returns", "show", SESSION, "--json", cwd=tmp_path)
    [auth] = shown["groups"]
    assert auth["roles"] == ["developer", "qa_expert", "tech_lead", "project_manager"]
    assert auth["state"] == "ended"
    assert shown["lines"] == lines

    # --json: the tool's chain answer. A group whose QA answers in prose stops there: exit 1.
    prose = [role_rule("qa_expert", "PASS", reply="All 25 tests pass, ship it!")]
    stopped_data = chain_config(tmp_path / "data2", {"qa_expert": prose})
    answer = _cli(
        stopped_data, *chain[2:], "--json", "Implement AUTH", cwd=tmp_path, code=1
    )  # fmt: skip
    assert answer["status"] == "ok"
    [group] = answer["groups"]
    assert group["reason"] == "invalid"
    assert [s["status"] for s in group["steps"]] == ["READY_FOR_QA", "INVALID_RETURN"]
    assert answer["lines"][-1].endswith("→ stop")
    assert answer["artifacts_session"].startswith("crp-")
