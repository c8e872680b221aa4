"""The scripted runner's Write tool: a rule writes files in the run's folder before it
replies, with the match's named groups as placeholders, and never anywhere else."""

from __future__ import annotations

import json
import os
import string
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import AgentConfig
from core.models import Role
from core.runners.base import MessageOut, RunEvent, RunFailed, RunRequest
from core.runners.scripted import Script, ScriptedRunner, fill, load_script

HANDOFF = '{"from_agent": "developer", "status": "READY_FOR_QA", "details": {"files": ["{file}"]}}'
REPLY = '{"status": "READY_FOR_QA", "summary": ["did {group}", "changed {file}", "tests pass"]}'


def runner(rules: list[dict[str, object]]) -> ScriptedRunner:
    return ScriptedRunner("dev", "dev", Script.model_validate({"rules": rules}), 0.0)


async def events_of(r: ScriptedRunner, prompt: str, cwd: Path) -> list[RunEvent]:
    request = RunRequest("r1", "c1", "dev", prompt, cwd, turn=1)
    return [event async for event in r.run(request)]


def reply_of(events: list[RunEvent]) -> str:
    [reply] = [e.content for e in events if isinstance(e, MessageOut) and e.role is Role.ASSISTANT]
    return reply


def failure_of(events: list[RunEvent]) -> str:
    [failed] = [e for e in events if isinstance(e, RunFailed)]
    return failed.error


def test_only_known_names_are_replaced_so_json_keeps_its_braces() -> None:
    values = {"group": "AUTH"}
    assert fill('{"a": {"b": "{group}"}}', values) == '{"a": {"b": "AUTH"}}'
    assert fill("{unknown} {{group}} {}", values) == "{unknown} {AUTH} {}"
    # A value holding a placeholder is not filled again.
    assert fill("{group}", {"group": "{prompt}", "prompt": "x"}) == "{prompt}"


async def test_a_rule_writes_its_file_with_the_named_groups_then_replies(tmp_path: Path) -> None:
    r = runner(
        [
            {
                "match": r"Group (?P<group>\w+).*write (?P<handoff>\S+\.json)",
                "reply": REPLY,
                "write": [
                    {"path": "{handoff}", "content": HANDOFF},
                    {"path": "notes/{group}/turn{turn}.md", "content": "{agent}: {prompt}"},
                ],
            }
        ]
    )
    prompt = "Group AUTH: add login; write .delegate/x/handoff_developer.json (file=auth.py)"

    events = await events_of(r, prompt, tmp_path)

    written = json.loads((tmp_path / ".delegate/x/handoff_developer.json").read_text())
    assert written == {
        "from_agent": "developer",
        "status": "READY_FOR_QA",
        "details": {"files": ["{file}"]},  # no such group: the braces stay as written
    }
    assert (tmp_path / "notes/AUTH/turn1.md").read_text() == f"dev: {prompt}"
    assert json.loads(reply_of(events))["summary"][0] == "did AUTH"
    # Each write shows as a Write tool call, before the reply.
    tools = [e for e in events if isinstance(e, MessageOut) and e.role is Role.TOOL]
    assert [t.tool["input"]["file_path"] for t in tools if t.tool] == [
        ".delegate/x/handoff_developer.json",
        "notes/AUTH/turn1.md",
    ]
    assert not [e for e in events if isinstance(e, RunFailed)]


async def test_a_write_replaces_a_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "out.json").write_text("old and much longer than the new content")
    r = runner([{"write": [{"path": "out.json", "content": "{}"}], "reply": "ok"}])

    await events_of(r, "go", tmp_path)

    assert (tmp_path / "out.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


async def test_an_absolute_path_inside_the_folder_is_written(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.txt"
    r = runner([{"write": [{"path": str(target), "content": "x"}], "reply": "ok"}])

    await events_of(r, "go", tmp_path)

    assert target.read_text() == "x"


@pytest.mark.parametrize(
    "path",
    ["../escape.txt", "a/../../escape.txt", "/tmp/escape-{agent}.txt", "", ".", "a\0b"],
)
async def test_a_path_leaving_the_folder_fails_the_run_and_writes_nothing(
    tmp_path: Path, path: str
) -> None:
    cwd = tmp_path / "run"
    cwd.mkdir()
    r = runner([{"write": [{"path": "{p}", "content": "x"}], "match": "(?P<p>.*)", "reply": "no"}])

    events = await events_of(r, path, cwd)

    assert "scripted runner: cannot write" in failure_of(events)
    assert not [e for e in events if isinstance(e, MessageOut) and e.role is Role.ASSISTANT]
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


async def test_a_symlinked_folder_never_leads_a_write_out(tmp_path: Path) -> None:
    cwd, outside = tmp_path / "run", tmp_path / "outside"
    cwd.mkdir()
    outside.mkdir()
    (cwd / "link").symlink_to(outside)
    r = runner([{"write": [{"path": "link/x.txt", "content": "x"}], "reply": "no"}])

    events = await events_of(r, "go", cwd)

    assert "not a real folder" in failure_of(events)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
async def test_only_a_regular_file_is_replaced(tmp_path: Path, kind: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    cwd = tmp_path / "run"
    cwd.mkdir()
    target = cwd / "target"
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    r = runner([{"write": [{"path": "target", "content": "x"}], "reply": "no"}])

    events = await events_of(r, "go", cwd)

    assert "regular file" in failure_of(events)
    assert victim.read_text() == "keep"
    assert sorted(p.name for p in cwd.iterdir()) == ["target"]


_SEGMENTS = st.sampled_from(["..", ".", "", "a", "b", "/", "\0", "~", "-x", "a" * 300])


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_SEGMENTS, min_size=1, max_size=6), absolute=st.booleans())
async def test_no_hostile_path_writes_outside_the_folder(
    tmp_path: Path, parts: list[str], absolute: bool
) -> None:
    base = tmp_path / f"case-{os.urandom(4).hex()}"
    cwd = base / "run"
    cwd.mkdir(parents=True)
    path = "/".join(parts)
    if absolute:
        path = "/" + path
    r = runner([{"match": "(?s)(?P<p>.*)", "write": [{"path": "{p}", "content": "x"}]}])

    events = await events_of(r, path, cwd)

    failed = [e for e in events if isinstance(e, RunFailed)]
    assert sorted(p.name for p in base.iterdir()) == ["run"]
    if not failed:
        [written] = [p for p in cwd.rglob("*") if p.is_file()]
        assert written.read_text() == "x"


async def test_a_script_file_with_writes_loads_and_runs(tmp_path: Path) -> None:
    script = tmp_path / "dev.toml"
    script.write_text(
        """
[[rules]]
match = "group (?P<group>[A-Z]+)"
reply = '{"status": "READY_FOR_QA", "summary": ["{group}", "b", "c"]}'
[[rules.write]]
path = "handoffs/{group}.json"
content = '{"group": "{group}"}'
""",
        encoding="utf-8",
    )
    config = AgentConfig(runner="scripted", script=script)
    r = ScriptedRunner.from_config("dev", config)

    events = await events_of(r, "work on group PAY", tmp_path)

    assert json.loads((tmp_path / "handoffs/PAY.json").read_text()) == {"group": "PAY"}
    assert json.loads(reply_of(events))["summary"] == ["PAY", "b", "c"]
    assert load_script(script).rules[0].write[0].path == "handoffs/{group}.json"


def test_placeholder_names_are_identifiers() -> None:
    text = "".join("{" + c + "}" for c in string.punctuation if c not in "{}_")
    assert fill(text, {c: "X" for c in string.punctuation}) == text


async def test_the_documented_example_writes_its_hand_off_file(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    section = docs.read_text(encoding="utf-8").split("## Scripted runner scripts")[1]
    example = section.split("```toml")[1].split("```")[0]
    r = ScriptedRunner("dev", "dev", Script.model_validate(tomllib.loads(example)), 0.0)

    events = await events_of(r, "write your hand-off file `.delegate/g/h.json` first", tmp_path)

    assert json.loads((tmp_path / ".delegate/g/h.json").read_text())["status"] == "READY_FOR_QA"
    assert json.loads(reply_of(events))["summary"][2] == "tests pass"
