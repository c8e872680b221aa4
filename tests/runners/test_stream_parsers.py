"""Stream parsers of the CLI and HTTP runners, fed lines recorded from the real tools."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from core.config import AgentConfig
from core.errors import InvalidId, RunnerUnavailable
from core.models import Message, Role, Usage
from core.runners import build_runner
from core.runners.base import (
    ConversationIdAssigned,
    MessageOut,
    RunCompleted,
    RunFailed,
    RunRequest,
    TextDelta,
)
from core.runners.claude_code import ClaudeCodeRunner, ClaudeStreamParser
from core.runners.codex import CodexRunner, CodexStreamParser, find_rollout, latest_token_info
from core.runners.openai_compat import ChatStreamParser, chat_messages

SID = "11111111-2222-4333-8444-555555555555"

# Recorded from claude 2.1.328 -p --output-format stream-json --verbose (fields trimmed).
CLAUDE_LINES = [
    {"type": "system", "subtype": "init", "session_id": SID, "model": "claude-x", "tools": []},
    {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "tu_1", "name": "Bash", "input": {"command": "ls"}},
            ],
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 85,
                "output_tokens": 1,
            },
        },
        "session_id": SID,
    },
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "a.txt"}],
        },
        "session_id": SID,
    },
    {
        "type": "assistant",
        "message": {
            "id": "msg_2",
            "content": [{"type": "text", "text": "There is a.txt."}],
            "usage": {
                "input_tokens": 20,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 100,
                "output_tokens": 9,
            },
        },
        "session_id": SID,
    },
    {"type": "rate_limit_event", "info": {}},
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "There is a.txt.",
        "session_id": SID,
        "num_turns": 2,
        "usage": {
            "input_tokens": 30,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 185,
            "output_tokens": 20,
        },
    },
]

# Recorded from codex-cli 0.169.0 exec --json (a launch with one shell command).
CODEX_LINES = [
    {"type": "thread.started", "thread_id": "01a1fff9-f034-7110-8849-574ad3f2c456"},
    {
        "type": "item.completed",
        "item": {"id": "item_0", "type": "error", "message": "Model metadata not found."},
    },
    {"type": "turn.started"},
    {
        "type": "item.started",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "ls",
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "ls",
            "aggregated_output": "a.txt\n",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_2", "type": "reasoning", "text": "hm"}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "pong 2"}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 600, "cached_input_tokens": 0, "output_tokens": 14},
    },
]


def feed_all(parser: ClaudeStreamParser | CodexStreamParser, lines: list[object]) -> list[object]:
    events: list[object] = []
    for line in lines:
        events += parser.feed(line if isinstance(line, str) else json.dumps(line))
    return events


def request(
    tmp_path: Path, *, follow_up: bool = False, prompt: str = "-p is my prompt"
) -> RunRequest:
    return RunRequest(
        "run-1", SID, "agent", prompt, tmp_path, 2 if follow_up else 1, is_follow_up=follow_up
    )


# --- Claude Code -------------------------------------------------------------


def test_claude_stream_becomes_text_tool_messages_and_usage() -> None:
    parser = ClaudeStreamParser()
    events = feed_all(parser, CLAUDE_LINES)
    assert parser.session_id == SID
    assert events[0] == TextDelta("Let me look.")
    assert events[1] == MessageOut(Role.ASSISTANT, "Let me look.")
    tool = events[2]
    assert isinstance(tool, MessageOut)
    assert tool.role is Role.TOOL
    assert tool.tool == {"name": "Bash", "input": {"command": "ls"}, "id": "tu_1"}
    assert events[3] == MessageOut(
        Role.TOOL, "a.txt", tool={"tool_use_id": "tu_1", "is_error": False}
    )
    assert events[-1] == MessageOut(Role.ASSISTANT, "There is a.txt.")
    done = parser.finish(0, "")
    assert isinstance(done, RunCompleted)
    assert done.usage == Usage(input_tokens=220, output_tokens=20)
    # Two API calls: the context is what the last call read (its output is not in yet).
    assert done.context_tokens == 20 + 100 + 0
    assert parser.skipped == 0


def test_claude_error_result_and_missing_result_fail_with_stderr() -> None:
    parser = ClaudeStreamParser()
    feed_all(
        parser,
        [
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": "API Error: 529 overloaded",
            }
        ],
    )
    failed = parser.finish(1, "boom on stderr\n")
    assert isinstance(failed, RunFailed)
    assert "API Error: 529 overloaded" in failed.error
    assert "boom on stderr" in failed.error
    assert failed.stderr == "boom on stderr\n"

    cut = ClaudeStreamParser()
    feed_all(cut, [CLAUDE_LINES[0], "{not json", "[1, 2]", {"type": "brand_new_type"}])
    assert cut.skipped == 3
    failed = cut.finish(137, "")
    assert isinstance(failed, RunFailed)
    assert failed.error == "claude exited with code 137 before a result"


def test_claude_argv_launch_names_the_session_follow_up_resumes(tmp_path: Path) -> None:
    runner = ClaudeCodeRunner("claude-code", "/bin/claude", ("--model", "x"), {})
    assert runner.argv(request(tmp_path)) == [
        "/bin/claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        f"--session-id={SID}",
        "--model",
        "x",
        "--",
        "-p is my prompt",
    ]
    assert runner.argv(request(tmp_path, follow_up=True))[5] == f"--resume={SID}"
    assert runner.owns_transcript
    assert not runner.wants_history


# --- Codex -----------------------------------------------------------------


def test_codex_stream_becomes_messages_and_usage() -> None:
    parser = CodexStreamParser()
    events = feed_all(parser, CODEX_LINES)
    assert parser.thread_id == "01a1fff9-f034-7110-8849-574ad3f2c456"
    assert events[0] == MessageOut(Role.SYSTEM, "Model metadata not found.")
    shell = events[1]
    assert isinstance(shell, MessageOut)
    assert shell.role is Role.TOOL
    assert shell.content == "$ ls\na.txt"
    assert shell.tool is not None
    assert shell.tool["exit_code"] == 0
    assert events[2:] == [TextDelta("pong 2"), MessageOut(Role.ASSISTANT, "pong 2")]
    assert parser.done
    done = parser.finish(0, "")
    assert isinstance(done, RunCompleted)
    assert done.usage == Usage(input_tokens=600, output_tokens=14)


def test_codex_usage_is_per_run_and_meter_from_the_rollout(tmp_path: Path) -> None:
    thread = "01a1fff9-f034-7110-8849-574ad3f2c456"
    day = tmp_path / "sessions" / "2026" / "11" / "21"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-11-21T21-18-52-{thread}.jsonl"

    def token_count(total_in: int, total_out: int, last_in: int) -> str:
        info = {
            "total_token_usage": {"input_tokens": total_in, "output_tokens": total_out},
            "last_token_usage": {"input_tokens": last_in, "output_tokens": 7},
            "model_context_window": 258400,
        }
        return json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": info}})

    rollout.write_text(
        "\n".join(
            [
                json.dumps({"type": "session_meta", "payload": {"id": thread}}),
                token_count(200, 7, 200),
                json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": None}}),
            ]
        )
        + "\n"
    )
    assert find_rollout(tmp_path, thread) == rollout
    before = latest_token_info(rollout)
    assert before is not None
    assert before.total == Usage(input_tokens=200, output_tokens=7)
    with rollout.open("a") as fh:
        fh.write(token_count(600, 14, 400) + "\n" + '{"torn": ')
    after = latest_token_info(rollout)
    assert after is not None
    assert after.last_input_tokens == 400

    parser = CodexStreamParser()
    feed_all(parser, CODEX_LINES)
    done = parser.finish(0, "", before=before, after=after)
    assert isinstance(done, RunCompleted)
    assert done.usage == Usage(input_tokens=400, output_tokens=7)  # not the thread's total
    assert (done.context_tokens, done.context_limit) == (400, 258400)


def test_codex_failures() -> None:
    parser = CodexStreamParser()
    feed_all(
        parser,
        [CODEX_LINES[0], {"type": "turn.failed", "error": {"message": "stream disconnected"}}],
    )
    assert parser.done
    failed = parser.finish(1, "")
    assert isinstance(failed, RunFailed)
    assert failed.error == "codex turn failed: stream disconnected"

    parser = CodexStreamParser()
    feed_all(parser, [{"type": "error", "message": "unexpected status 401"}])
    failed = parser.finish(1, "Error: unauthorized\n")
    assert isinstance(failed, RunFailed)
    assert failed.error == "codex turn failed: unexpected status 401\nError: unauthorized"


def test_codex_argv_resume_comes_after_options(tmp_path: Path) -> None:
    runner = CodexRunner("codex", "/bin/codex", ("--skip-git-repo-check",), {})
    assert runner.argv(request(tmp_path)) == [
        "/bin/codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--",
        "-p is my prompt",
    ]
    assert runner.argv(request(tmp_path, follow_up=True)) == [
        "/bin/codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "resume",
        "--",
        SID,
        "-p is my prompt",
    ]


@pytest.mark.parametrize(
    "hostile", ["--last", "-p", "../../etc/passwd", "a b", "x\ny", "*", "", SID + "\n"]
)
def test_runners_never_put_an_invalid_id_in_argv_or_a_glob(tmp_path: Path, hostile: str) -> None:
    follow_up = dataclasses.replace(request(tmp_path, follow_up=True), conversation_id=hostile)
    for runner in (
        ClaudeCodeRunner("claude-code", "/bin/claude", (), {}),
        CodexRunner("codex", "/bin/codex", (), {}),
    ):
        with pytest.raises(InvalidId):
            runner.argv(follow_up)
    (tmp_path / "sessions" / "2026" / "05" / "11").mkdir(parents=True)
    assert find_rollout(tmp_path, hostile) is None


def test_a_line_nested_past_the_recursion_limit_is_skipped() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for parser in (ClaudeStreamParser(), CodexStreamParser()):
        assert parser.feed(deep) == []
        assert parser.feed('{"type": "x", "y": ' + deep + "}") == []
        assert parser.skipped == 2
    chat = ChatStreamParser()
    assert chat.feed("data: " + deep) == []
    assert chat.skipped == 1


# --- openai_compat -----------------------------------------------------------


def test_chat_sse_stream() -> None:
    parser = ChatStreamParser()
    lines = [
        ": keep-alive",
        'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
        "",
        'data: {"choices":[{"index":0,"delta":{"content":"po"}}]}',
        'data: {"choices":[{"index":0,"delta":{"content":"ng"},"finish_reason":"stop"}]}',
        'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2}}',
        "data: [DONE]",
    ]
    events = [e for line in lines for e in parser.feed(line)]
    assert events == [TextDelta("po"), TextDelta("ng")]
    assert parser.finished
    assert parser.finish() == [
        MessageOut(Role.ASSISTANT, "pong"),
        RunCompleted(Usage(input_tokens=12, output_tokens=2), context_tokens=14),
    ]
    broken = ChatStreamParser()
    broken.feed('data: {"error": {"message": "model not found"}}')
    assert broken.finish() == [RunFailed("endpoint error: model not found")]


def test_chat_messages_keep_only_the_conversation() -> None:
    from datetime import UTC, datetime

    def msg(seq: int, role: Role, content: str) -> Message:
        return Message(
            id=str(seq),
            conversation_id="c",
            seq=seq,
            role=role,
            content=content,
            created_at=datetime.now(UTC),
        )

    history = [
        msg(0, Role.USER, "hi"),
        msg(1, Role.TOOL, "ls: ok"),
        msg(2, Role.ASSISTANT, "hello"),
        msg(3, Role.SYSTEM, "run failed: x"),
    ]
    assert chat_messages(history, "next") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "next"},
    ]


# --- configuration ----------------------------------------------------------


def test_missing_binary_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RunnerUnavailable, match=r"set agents\.claude-code\.binary in config\.toml"):
        build_runner("claude-code", AgentConfig(runner="claude_code"))
    with pytest.raises(RunnerUnavailable, match=r"agents\.mine\.binary"):
        build_runner("mine", AgentConfig(runner="codex", binary="/nope/codex"))
    with pytest.raises(RunnerUnavailable, match=r"agents\.chat\.base_url"):
        build_runner("chat", AgentConfig(runner="openai_compat", model="m"))
    with pytest.raises(RunnerUnavailable, match=r"NO_SUCH_KEY"):
        build_runner(
            "chat",
            AgentConfig(
                runner="openai_compat", base_url="http://x", model="m", api_key_env="NO_SUCH_KEY"
            ),
        )


def test_builtin_agents_and_partial_override(tmp_path: Path) -> None:
    from core.config import load_settings

    (tmp_path / "config.toml").write_text('[agents.claude-code]\nbinary = "/opt/claude"\n')
    agents = load_settings(tmp_path).agents
    assert agents["claude-code"].runner == "claude_code"
    assert agents["claude-code"].binary == "/opt/claude"
    assert agents["claude-code"].context_limit == 200_000
    assert agents["codex"].runner == "codex"
    assert isinstance(build_runner, object)  # registry imports every runner
    assert ConversationIdAssigned("x").external_id == "x"
