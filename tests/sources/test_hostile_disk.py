"""Hostile trees: odd names and odd files are skipped and counted, never fatal, never a hang.

Every import here runs in a child process (the real console script) under a
timeout, so a regression that blocks in ``open()`` fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hostile_trees import HostileTree, build_hostile_tree, claude_lines, deep_line, jsonl
from source_homes import Homes
from support import json_out, run_cli

from core.sources.worker import FileResult, FileTask, parse_batch

TIMEOUT = 60


def _import(tree: HostileTree | Homes, home: Path) -> dict[str, Any]:
    home.mkdir(exist_ok=True)
    result = run_cli(
        "--data-dir",
        str(home / "data"),
        "import",
        "--json",
        "--claude-dir",
        str(tree.claude),
        "--codex-dir",
        str(tree.codex),
        home=home,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json_out(result)
    return report


def _listed(home: Path) -> dict[str, dict[str, Any]]:
    """Every session, through the CLI and through the JSON tool (they must agree)."""
    data = ["--data-dir", str(home / "data")]
    cli = run_cli(*data, "sessions", "list", "--json", "--limit", "100", home=home, timeout=TIMEOUT)
    assert cli.returncode == 0, cli.stderr
    tool = run_cli(
        *data,
        "tool",
        "delegate_sessions",
        json.dumps({"operation": "list", "limit": 100}),
        home=home,
        timeout=TIMEOUT,
    )
    assert tool.returncode == 0, tool.stderr
    from_cli = _sessions(json_out(cli))
    from_tool = _sessions(json_out(tool))
    assert from_cli.keys() == from_tool.keys()
    return from_cli


def _sessions(out: Any) -> dict[str, dict[str, Any]]:
    items = out["sessions"] if isinstance(out, dict) else out
    return {s["conversation_id"]: s for s in items}


def _skipped(report: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["kind"] for s in report["skipped"]}


def _escaped(path: bytes) -> str:
    return path.decode("utf-8", "backslashreplace")


def test_names_that_are_not_utf8_are_skipped_and_named_escaped(
    realdata: Homes, tmp_path: Path
) -> None:
    """``bad\\xff\\xfe.jsonl`` aborted the whole import (0 of 22 sessions listed)."""
    tree = build_hostile_tree(tmp_path / "hostile", only={"non_utf8_file", "non_utf8_dir"})
    project = os.fsencode(realdata.projects / "-experiments-ideas")
    fd = os.open(project + b"/bad\xff\xfe.jsonl", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, jsonl(claude_lines("11111111-2222-4333-8444-555555555555", "never")))
    os.close(fd)

    report = _import(realdata, tmp_path)
    assert report["sessions_added"] == 22
    assert _skipped(report) == {_escaped(project + b"/bad\xff\xfe.jsonl"): "bad_name"}
    assert report["entries_skipped"] == 1
    # Listed: all but Claude Code's two warm-up sub-agents (hidden by default).
    assert len(_listed(tmp_path)) == 20

    home = tmp_path / "h2"
    report = _import(tree, home)
    assert set(_listed(home)) == set(tree.good)
    assert _skipped(report) == {_escaped(h.path): "bad_name" for h in tree.hazards}


@pytest.mark.parametrize(
    ("hazard", "kind"),
    [
        ("fifo_transcript", "not_regular"),
        ("fifo_meta", "not_regular"),
        ("dev_zero_link", "outside_tree"),  # a link out of the tree is not even stat'ed
    ],
)
def test_only_regular_files_are_opened(hazard: str, kind: str, tmp_path: Path) -> None:
    """A FIFO blocked the import in ``open()``; ``/dev/zero`` was read at 100% CPU."""
    tree = build_hostile_tree(tmp_path / "hostile", only={hazard})
    report = _import(tree, tmp_path)
    assert set(_listed(tmp_path)) == set(tree.good)
    assert _skipped(report) == {_escaped(h.path): kind for h in tree.skipped()}
    assert report["entries_skipped"] == len(tree.skipped())


def test_directory_loops_are_walked_once(tmp_path: Path) -> None:
    """``loop1 -> .`` and ``loop2 -> .`` made the walk grow like k^40."""
    tree = build_hostile_tree(tmp_path / "hostile", only={"dir_loops"})
    report = _import(tree, tmp_path)
    assert report["files_seen"] == len(tree.good)  # each transcript found once
    assert report["sessions_added"] == len(tree.good)
    assert set(_listed(tmp_path)) == set(tree.good)
    assert _skipped(report) == {_escaped(h.path): "loop" for h in tree.skipped()}


def test_deep_directories_stop_at_the_depth_bound(tmp_path: Path) -> None:
    tree = build_hostile_tree(tmp_path / "hostile", only=())
    deep = tree.codex / "sessions"
    for _ in range(40):
        deep = deep / "d"
    deep.mkdir(parents=True)
    report = _import(tree, tmp_path)
    assert set(_listed(tmp_path)) == set(tree.good)
    assert list(_skipped(report).values()) == ["too_deep"]


def test_symlinks_out_of_the_tree_are_not_followed(tmp_path: Path) -> None:
    tree = build_hostile_tree(tmp_path / "hostile", only={"outside_link"})
    outside_file = tmp_path / "elsewhere.jsonl"
    outside_file.write_bytes(jsonl(claude_lines("11111111-2222-4333-8444-555555555555", "x")))
    link = tree.claude / "projects" / "-work-hostile" / "11111111-2222-4333-8444-555555555555.jsonl"
    link.symlink_to(outside_file)
    inside = tree.claude / "projects" / "-work-alias"  # a link inside the tree is followed
    inside.symlink_to(tree.claude / "projects" / "-work-hostile")

    report = _import(tree, tmp_path)
    assert set(_listed(tmp_path)) == set(tree.good)
    assert _skipped(report) == {
        str(tree.claude / "projects" / "-work-linked-out"): "outside_tree",
        str(link): "outside_tree",
        str(inside): "loop",  # its folder is walked once, under its own name
    }


def test_a_symlinked_root_is_followed(tmp_path: Path) -> None:
    """The roots themselves are the user's choice: a ``~/.codex`` on another disk is fine."""
    tree = build_hostile_tree(tmp_path / "real", only=())
    (tmp_path / "links").mkdir()
    claude, codex = tmp_path / "links" / "claude", tmp_path / "links" / "codex"
    claude.symlink_to(tree.claude)
    codex.symlink_to(tree.codex)
    home = tmp_path / "home"
    report = _import(Homes(claude, codex), home)
    assert report["skipped"] == []
    assert set(_listed(home)) == set(tree.good)


def test_undecodable_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    """A line nested 100,000 deep, a huge line, a BOM."""
    tree = build_hostile_tree(tmp_path / "hostile", only={"deep_line", "huge_line", "bom"})
    report = _import(tree, tmp_path)
    listed = _listed(tmp_path)
    assert set(listed) == set(tree.good)
    for sid, title in tree.good.items():
        assert listed[sid]["title"] == title  # the BOM's first line is read, not dropped
    assert report["malformed_lines"] == 2  # the two deep lines
    assert report["oversized_lines"] == 1
    assert report["skipped"] == []


def test_poisoned_timestamps_and_numbers_never_break_reading(tmp_path: Path) -> None:
    """``9999-12-31T23:59:59-14:00`` imported, then every list died (year 10000)."""
    tree = build_hostile_tree(tmp_path / "hostile", only={"poisoned_timestamps", "huge_numbers"})
    _import(tree, tmp_path)
    listed = _listed(tmp_path)
    assert set(listed) == set(tree.good)
    for session in listed.values():
        for field in ("created_at", "last_interacted_at"):
            assert "2000" <= session[field][:4] <= "2100", (session["title"], session[field])
        for value in _numbers(session):
            assert 0 <= value < 2**63
    show = run_cli(
        "--data-dir", str(tmp_path / "data"), "sessions", "show", next(iter(tree.good)),
        home=tmp_path, timeout=TIMEOUT,
    )  # fmt: skip
    assert show.returncode == 0, show.stderr


def _numbers(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return []


def test_the_whole_hostile_tree_imports_once_and_lists(tmp_path: Path) -> None:
    tree = build_hostile_tree(tmp_path / "hostile")
    report = _import(tree, tmp_path)
    assert set(_listed(tmp_path)) == set(tree.good)
    assert {_escaped(h.path) for h in tree.skipped()} == set(_skipped(report))
    again = _import(tree, tmp_path)  # a re-scan: nothing new, the same skips
    assert again["sessions_added"] == 0
    assert again["files_read"] == 0
    assert set(_skipped(again)) == set(_skipped(report))


# --- the preview and the ``messages`` operation ------------------------------


def _show(home: Path, sid: str, *, cli: bool = True) -> Any:
    data = ["--data-dir", str(home / "data")]
    result = run_cli(
        *data,
        "tool",
        "delegate_sessions",
        json.dumps({"operation": "messages", "conversation_id": sid}),
        home=home,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    if cli:
        shown = run_cli(*data, "sessions", "show", sid, home=home, timeout=TIMEOUT)
        assert shown.returncode == 0, shown.stderr
    return json_out(result)


def test_a_transcript_that_became_a_fifo_after_import_shows_nothing(tmp_path: Path) -> None:
    """``sessions show`` hung on a FIFO where the transcript was."""
    tree = build_hostile_tree(tmp_path / "hostile", only=())
    _import(tree, tmp_path)
    sid = next(iter(tree.good))
    path = next((tree.claude / "projects").rglob(f"{sid}.jsonl"))
    path.unlink()
    os.mkfifo(path)
    assert _show(tmp_path, sid)["messages"] == []
    path.unlink()
    path.symlink_to("/dev/zero")
    assert _show(tmp_path, sid)["messages"] == []


def test_the_preview_skips_deep_lines(tmp_path: Path) -> None:
    """Deep lines in a transcript; a tool input nested as deep as JSON decoders allow."""
    tree = build_hostile_tree(tmp_path / "hostile", only=())
    sid = next(iter(tree.good))
    path = next((tree.claude / "projects").rglob(f"{sid}.jsonl"))
    lines = claude_lines(sid, "the prompt")
    # Built as bytes: the stdlib encoder itself stops at this depth.
    nested = b'{"k":' * 1000 + b'"bottom"' + b"}" * 1000
    tool_line = dict(lines[1], uuid="tool-call")
    tool_line["message"] = dict(
        lines[1]["message"],
        id="msg-2",
        content=[{"type": "tool_use", "id": "t1", "name": "Deep", "input": "@NESTED@"}],
    )
    result_line = dict(lines[0], uuid="tool-result")
    opening = b'[{"type":"tool_result","tool_use_id":"t1","content":' * 480
    result_line["message"] = {"role": "user", "content": "@CONTENT@"}
    body = jsonl(lines) + deep_line() + deep_line(1000)
    body += jsonl([tool_line]).replace(b'"@NESTED@"', nested)
    body += jsonl([result_line]).replace(b'"@CONTENT@"', opening + b'"deep output"' + b"}]" * 480)
    path.write_bytes(body)
    _import(tree, tmp_path)
    messages = _show(tmp_path, sid, cli=False)["messages"]  # (with their tool labels)
    # Newest first; the 100,000-deep line is skipped, the 1,000-deep one decodes.
    assert [m["role"] for m in messages] == ["tool", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in messages[-2:]] == ["done", "the prompt"]
    depth, value = 0, messages[1]["tool"]["input"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["k"]
    assert depth < 30  # shown cut, not as deep as written
    assert value == "…"


def test_a_worker_handed_a_fifo_returns_at_once(tmp_path: Path) -> None:
    """A file can turn into a FIFO between the walk and the read: the open must not block.

    Run in a daemon thread: a regression blocks in ``open()`` and fails the
    join instead of hanging the suite.
    """
    fifo = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    os.mkfifo(fifo)
    task = FileTask(str(fifo), "claude-code", 0, 0, fifo.stem)
    results: list[FileResult] = []
    thread = threading.Thread(target=lambda: results.extend(parse_batch([task])), daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "parse_batch blocked on a FIFO"
    assert results[0].error == "not a regular file (a FIFO)"
    assert results[0].facts is None


def test_the_import_report_never_prints_a_name_that_steers_the_terminal(tmp_path: Path) -> None:
    """A valid UTF-8 name holding escape sequences is listed escaped by ``import --report``."""
    tree = build_hostile_tree(tmp_path / "hostile", only={"fifo_transcript"})
    evil = tree.claude / "projects" / "-evil" / "\x1b]0;pwned\x07\x1b[2J.jsonl"
    evil.parent.mkdir(parents=True)
    os.mkfifo(evil)
    home = tmp_path / "home"
    assert _import(tree, home)["entries_skipped"] >= 2
    data = ["--data-dir", str(home / "data")]
    result = run_cli(*data, "import", "--report", home=home, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert "pwned" in result.stdout  # the entry is listed ...
    assert "\x1b" not in result.stdout  # ... as text, never as a terminal command
    assert "\x07" not in result.stdout
