"""The command line through the installed ``delegate`` console script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support import DELEGATE, json_out, run_cli

from core.config import DB_FILENAME


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """50 demo sessions, made once by ``delegate demo``; copy it before changing it."""
    home = tmp_path_factory.mktemp("demo-home")
    data = home / "data"
    result = run_cli("--data-dir", str(data), "demo", "--sessions", "50", home=home)
    assert result.returncode == 0, result.stderr
    assert "added 50 demo sessions" in result.stdout
    return data


@pytest.fixture
def data(demo_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the demo data folder."""
    return Path(shutil.copytree(demo_dir, tmp_path / "data"))


def cli(data_dir: Path, *args: str, stdin: str | None = None) -> Any:
    return run_cli("--data-dir", str(data_dir), *args, home=data_dir.parent, stdin=stdin)


def test_console_script_is_installed() -> None:
    assert DELEGATE.exists()
    assert shutil.which("delegate", path=str(DELEGATE.parent)) == str(DELEGATE)


def test_tool_list_pages_newest_first(demo_dir: Path) -> None:
    first = cli(demo_dir, "tool", "delegate_sessions", '{"operation":"list","limit":3}')
    assert first.returncode == 0, first.stderr
    page1 = json_out(first)
    assert set(page1) == {"sessions", "next_cursor"}
    assert len(page1["sessions"]) == 3
    assert isinstance(page1["next_cursor"], str)
    request = json.dumps({"operation": "list", "limit": 3, "cursor": page1["next_cursor"]})
    page2 = json_out(cli(demo_dir, "tool", "delegate_sessions", request))
    assert len(page2["sessions"]) == 3

    ids = [s["conversation_id"] for s in page1["sessions"] + page2["sessions"]]
    assert len(set(ids)) == 6
    stamps = [s["last_interacted_at"] for s in page1["sessions"] + page2["sessions"]]
    assert stamps == sorted(stamps, reverse=True)
    # The same six, in the same order, as one page of the human command's JSON.
    listing = json_out(cli(demo_dir, "sessions", "list", "--limit", "6", "--json"))
    assert [s["conversation_id"] for s in listing["sessions"]] == ids


def test_tool_follow_up_grows_the_conversation(data: Path) -> None:
    top = json_out(cli(data, "tool", "delegate_sessions", '{"operation":"list","limit":20}'))
    # One with room in its window: a turn that crosses a context level hands off.
    session = next(
        s
        for s in top["sessions"]
        if s["context"]["used_tokens"] < s["context"]["limit_tokens"] * 0.4
    )
    cid, before = session["conversation_id"], session["metrics"]["messages"]

    runs = []
    for prompt in ("first follow-up", "second follow-up"):
        request = json.dumps({"conversation_id": cid, "prompt": prompt})
        result = cli(data, "tool", "delegate_agent", request)
        assert result.returncode == 0, result.stderr
        body = json_out(result)
        assert body["status"] == "ok"
        assert body["conversation_id"] == cid
        assert body["kind"] == "follow_up"
        assert body["agent_id"] == session["agent_id"]
        runs.append(body["run_id"])
    assert len(set(runs)) == 2

    shown = json_out(cli(data, "sessions", "show", cid, "--json", "--last", "2"))
    assert shown["session"]["conversation_id"] == cid
    assert shown["session"]["metrics"]["messages"] == before + 4
    assert [m["role"] for m in shown["messages"]] == ["assistant", "user"]
    assert shown["messages"][1]["content"] == "second follow-up"
    assert shown["messages"][0]["content"].endswith("second follow-up")
    assert shown["messages"][0]["run_id"] == runs[1]
    assert isinstance(shown["next_cursor"], str)
    older = json_out(
        cli(
            data, "sessions", "show", cid, "--json", "--last", "2", "--cursor", shown["next_cursor"]
        )
    )
    assert [m["content"] for m in older["messages"]][1] == "first follow-up"


def test_tool_reads_the_request_from_stdin(demo_dir: Path) -> None:
    request = '{"operation": "list", "limit": 2}'
    from_stdin = cli(demo_dir, "tool", "delegate_sessions", "-", stdin=request)
    assert from_stdin.returncode == 0, from_stdin.stderr
    from_arg = cli(demo_dir, "tool", "delegate_sessions", request)
    assert json_out(from_stdin) == json_out(from_arg)
    assert len(json_out(from_stdin)["sessions"]) == 2


@pytest.mark.parametrize(
    ("tool", "request_", "code"),
    [
        (
            "delegate_sessions",
            '{"operation":"messages","conversation_id":"nope"}',
            "unknown_conversation",
        ),
        ("delegate_sessions", '{"operation":"list","limit":0}', "invalid_request"),
        ("delegate_agent", "{not json", "invalid_request"),
        ("delegate_agent", '{"conversation_id":"nope","prompt":"hi"}', "unknown_conversation"),
    ],
)
def test_tool_error_payload_exits_1(demo_dir: Path, tool: str, request_: str, code: str) -> None:
    result = cli(demo_dir, "tool", tool, request_)
    assert result.returncode == 1
    body = json_out(result)
    assert body == {"status": "error", "error": {"code": code, "message": body["error"]["message"]}}


def test_sessions_list_json_and_limit_errors(demo_dir: Path) -> None:
    listing = json_out(cli(demo_dir, "sessions", "list", "--json"))
    assert set(listing) == {"sessions", "next_cursor"}
    assert len(listing["sessions"]) == 20
    bad = cli(demo_dir, "sessions", "list", "--limit", "0", "--json")
    assert bad.returncode == 1
    assert json_out(bad)["error"]["code"] == "invalid_request"
    assert "limit" in json_out(bad)["error"]["message"]
    human = cli(demo_dir, "sessions", "list", "--limit", "101")
    assert human.returncode == 1
    assert "invalid_request" in human.stderr
    assert "limit" in human.stderr


def test_sessions_dismiss(data: Path) -> None:
    cid = json_out(cli(data, "sessions", "list", "--limit", "1", "--json"))["sessions"][0][
        "conversation_id"
    ]
    dismissed = cli(data, "sessions", "dismiss", cid)
    assert dismissed.returncode == 0, dismissed.stderr
    assert f"archived {cid}" in dismissed.stdout
    listing = json_out(cli(data, "sessions", "list", "--limit", "100", "--json"))
    assert cid not in {s["conversation_id"] for s in listing["sessions"]}
    assert len(listing["sessions"]) == 49
    purged = cli(data, "sessions", "dismiss", "--purge", cid)
    assert purged.returncode == 0, purged.stderr
    again = cli(data, "sessions", "dismiss", cid)
    assert again.returncode == 1
    assert "unknown_conversation" in again.stderr
    shown = cli(data, "sessions", "show", cid, "--json")
    assert shown.returncode == 1
    assert json_out(shown)["error"]["code"] == "unknown_conversation"


def test_run_streams_the_reply_and_history_records_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    launch = cli(data, "run", "hello from the command line")
    assert launch.returncode == 0, launch.stderr
    assert launch.stdout.strip() == "[echo] turn 1: hello from the command line"
    assert "launch run" in launch.stderr
    cid = launch.stderr.split("in conversation ")[1].split()[0]

    follow = cli(data, "run", "--session", cid, "-", stdin="and a follow-up")
    assert follow.returncode == 0, follow.stderr
    assert follow.stdout.strip() == "[echo] turn 2: and a follow-up"
    assert "follow-up run" in follow.stderr
    assert f"in conversation {cid}" in follow.stderr

    history = json_out(cli(data, "history", "--json"))
    assert [e["kind"] for e in history] == [
        "follow_up_completed",
        "follow_up_started",
        "delegate_finished",
        "delegate_launched",
    ]
    assert {e["conversation_id"] for e in history} == {cid}
    assert history[0]["status"] == "completed"
    assert history[0]["usage"]["output_tokens"] > 0


def test_unknown_id_is_a_clear_error(demo_dir: Path) -> None:
    for args in (
        ("run", "--session", "no-such-id", "hello"),
        ("sessions", "show", "no-such-id"),
        ("sessions", "dismiss", "no-such-id"),
    ):
        result = cli(demo_dir, *args)
        assert result.returncode == 1, args
        assert result.stderr.strip().startswith("delegate: unknown_conversation:"), result.stderr
        assert "no-such-id" in result.stderr
        assert "Traceback" not in result.stderr


def test_data_dir_option_wins_over_delegate_home(tmp_path: Path) -> None:
    env_dir, option_dir = tmp_path / "from-env", tmp_path / "from-option"
    by_env = run_cli("run", "via env", home=tmp_path, env={"DELEGATE_HOME": str(env_dir)})
    assert by_env.returncode == 0, by_env.stderr
    assert (env_dir / DB_FILENAME).exists()

    by_option = run_cli(
        "--data-dir",
        str(option_dir),
        "sessions",
        "list",
        "--json",
        home=tmp_path,
        env={"DELEGATE_HOME": str(env_dir)},
    )
    assert json_out(by_option) == {"sessions": [], "next_cursor": None}
    assert (option_dir / DB_FILENAME).exists()
    from_env = json_out(
        run_cli("sessions", "list", "--json", home=tmp_path, env={"DELEGATE_HOME": str(env_dir)})
    )
    assert [s["title"] for s in from_env["sessions"]] == ["via env"]
    assert not (tmp_path / "xdg-data").exists()  # the default folder was never used


def test_demo_sessions_only_use_scripted_agents(tmp_path: Path) -> None:
    """Resuming a demo session must never start a real agent CLI."""
    from core.config import builtin_agents
    from core.demo import generate

    agents = {s.session.agent_id for s in generate(40, 0, len)}
    assert agents
    assert all(builtin_agents()[a].runner == "scripted" for a in agents)
