"""``delegate handoff ...`` through the real console script, and routing in ``delegate run``."""

from __future__ import annotations

from pathlib import Path

from handoff_support import config_with_agents, make_repo
from support import json_out, run_cli

from core.documents.handoff_files import ARCHIVE_DIR, PENDING_NOTE, handoffs_dir


def _cli(home: Path, data: Path, *args: str) -> object:
    result = run_cli("--data-dir", str(data), *args, home=home)
    assert result.returncode == 0, result.stderr + result.stdout
    return json_out(result)


def _start(home: Path, data: Path, repo: Path, agent: str) -> str:
    out = _cli(home, data, "run", "--agent", agent, "--cwd", str(repo), "--json", "implement login")
    assert isinstance(out, dict)
    return str(out["conversation_id"])


def test_write_list_show_and_a_follow_up_routed_to_the_successor(tmp_path: Path) -> None:
    data = config_with_agents(tmp_path / "data")
    repo = make_repo(tmp_path)
    cid = _start(tmp_path, data, repo, "writer")

    written = _cli(tmp_path, data, "handoff", "write", cid, "--json")
    assert isinstance(written, dict)
    assert written["status"] == "ok"
    assert written["document"]["producer"] == "agent"
    successor = written["successor_id"]
    path = written["document"]["path"]
    assert Path(path).parent == handoffs_dir(repo)

    listed = _cli(tmp_path, data, "handoff", "list", "--json")
    assert isinstance(listed, dict)
    [entry] = listed["handoffs"]
    assert entry["status"] == "consumed"
    assert entry["consumers"] == [successor]

    shown = _cli(tmp_path, data, "handoff", "show", path, "--json")
    assert isinstance(shown, dict)
    assert shown["problems"] == []
    assert shown["text"].startswith("# Context Handoff")
    assert shown["chain"] == [entry["document_id"]]

    result = run_cli(
        "--data-dir", str(data), "run", "--session", cid, "--json", "and the docs?", home=tmp_path
    )
    assert result.returncode == 0, result.stderr
    run = json_out(result)
    assert run["conversation_id"] == successor
    assert run["continued_in"] == successor
    assert f"session {cid} handed off: its work continues in {successor}" in result.stderr

    people = run_cli("--data-dir", str(data), "handoff", "list", home=tmp_path)
    assert path in people.stdout


def test_a_pending_handoff_is_continued_from_its_file(tmp_path: Path) -> None:
    data = config_with_agents(tmp_path / "data", auto_continue=False)
    repo = make_repo(tmp_path)
    cid = _start(tmp_path, data, repo, "mute")
    written = _cli(tmp_path, data, "handoff", "write", cid, "--json")
    assert isinstance(written, dict)
    assert written["pending"] is True
    assert written["successor_id"] is None
    note = handoffs_dir(repo) / PENDING_NOTE
    assert f"delegate handoff continue {written['document']['path']}" in note.read_text()

    continued = _cli(tmp_path, data, "handoff", "continue", written["document"]["path"], "--json")
    assert isinstance(continued, dict)
    assert continued["continued_from"] == cid
    assert not note.exists()
    people = run_cli(
        "--data-dir", str(data), "handoff", "list", "--status", "consumed", home=tmp_path
    )
    assert "consumed" in people.stdout


def test_prune_archives_a_finished_chain_only(tmp_path: Path) -> None:
    data = config_with_agents(tmp_path / "data")
    repo = make_repo(tmp_path)
    done = _start(tmp_path, data, repo, "writer")
    going = _start(tmp_path, data, repo, "writer")
    finished = _cli(tmp_path, data, "handoff", "write", done, "--json")
    running = _cli(tmp_path, data, "handoff", "write", going, "--json")
    assert isinstance(finished, dict)
    assert isinstance(running, dict)
    # The person is done with the first chain: its newest session is archived.
    _cli(tmp_path, data, "sessions", "dismiss", finished["successor_id"], "--json")

    dry = _cli(tmp_path, data, "handoff", "prune", "--dry-run", "--json")
    assert isinstance(dry, dict)
    assert dry["archived"] == [finished["document"]["path"]]
    assert Path(finished["document"]["path"]).exists()

    pruned = _cli(tmp_path, data, "handoff", "prune", "--json")
    assert isinstance(pruned, dict)
    [moved] = pruned["archived"]
    assert Path(moved).parent == handoffs_dir(repo) / ARCHIVE_DIR
    assert Path(moved).exists()
    assert not Path(finished["document"]["path"]).exists()
    assert Path(running["document"]["path"]).exists()
    assert pruned["kept"] == 1
    shown = _cli(tmp_path, data, "handoff", "show", moved, "--json")
    assert isinstance(shown, dict)
    assert shown["document"]["status"] == "archived"


def test_a_missing_file_is_a_typed_error_not_a_traceback(tmp_path: Path) -> None:
    data = config_with_agents(tmp_path / "data")
    result = run_cli(
        "--data-dir",
        str(data),
        "handoff",
        "show",
        str(tmp_path / ".delegate" / "handoffs" / "nope.md"),
        home=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("delegate: document_invalid: no hand-off file at")
    assert "Traceback" not in result.stderr
    result = run_cli(
        "--data-dir",
        str(data),
        "handoff",
        "continue",
        str(tmp_path / ".delegate" / "handoffs" / "nope.md"),
        "--json",
        home=tmp_path,
    )
    assert result.returncode == 1
    assert json_out(result)["error"]["code"] == "document_invalid"
