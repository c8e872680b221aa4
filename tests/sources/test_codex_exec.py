"""``codex exec`` rollouts log prompts only as user response items (no user_message)."""

from __future__ import annotations

import json
from pathlib import Path

from core.orchestrator import AgentOrchestrator

SESSION = "019d0000-0000-7000-8000-00000000e7ec"


def _line(ts: str, kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}) + "\n"


def _user_item(text: str) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _exec_rollout(codex_home: Path, *, with_events: bool) -> Path:
    day = codex_home / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    path = day / f"rollout-2026-11-20T10-00-00-{SESSION}.jsonl"
    lines = [
        _line("2026-11-20T10:00:00Z", "session_meta", {"id": SESSION, "cwd": "/work/app"}),
        _line("2026-11-20T10:00:01Z", "response_item", _user_item("<environment_context>x")),
        _line("2026-11-20T10:00:01Z", "response_item", _user_item("fix the flaky test")),
    ]
    if with_events:
        lines.append(
            _line(
                "2026-11-20T10:00:01Z",
                "event_msg",
                {"type": "user_message", "message": "fix the flaky test"},
            )
        )
    lines.append(
        _line(
            "2026-11-20T10:00:05Z",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "fixed"}],
            },
        )
    )
    path.write_text("".join(lines))
    return path


async def _imported(tmp_path: Path, *, with_events: bool) -> tuple[AgentOrchestrator, Path]:
    codex_home = tmp_path / "codex"
    _exec_rollout(codex_home, with_events=with_events)
    orch = await AgentOrchestrator.open(tmp_path / "data")
    await orch.import_sources(tmp_path / "no-claude", codex_home, workers=0)
    return orch, codex_home


async def test_exec_rollout_prompts_come_from_items(tmp_path: Path) -> None:
    orch, _ = await _imported(tmp_path, with_events=False)
    try:
        session = await orch.get_session(SESSION)
        assert session.title == "fix the flaky test"
        assert session.metrics.turns == 1
        assert session.metrics.messages == 2
        page = await orch.recent_messages(SESSION, 10)
        assert [(m.role.value, m.content) for m in page.messages] == [
            ("assistant", "fixed"),
            ("user", "fix the flaky test"),
        ]
    finally:
        await orch.close()


async def test_interactive_rollout_shows_each_prompt_once(tmp_path: Path) -> None:
    orch, _ = await _imported(tmp_path, with_events=True)
    try:
        session = await orch.get_session(SESSION)
        assert session.metrics.turns == 1
        page = await orch.recent_messages(SESSION, 10)
        prompts = [m.content for m in page.messages if m.role.value == "user"]
        assert prompts == ["fix the flaky test"]
        assert len(page.messages) == session.metrics.messages
    finally:
        await orch.close()
