"""``delegate run`` says what its turn's hand-off did: written or not (and where),
continued (in whom) or pending (and how to continue it) — never a promise it did not keep."""

from __future__ import annotations

import json
from pathlib import Path

from handoff_support import make_repo
from support import run_cli, write_config

from core.documents.handoff_files import PENDING_NOTE, handoffs_dir

PROMISE = "handed off to a new session"


def _data(root: Path, continuation: str) -> Path:
    """``climb``: ``seventy-five`` puts its context at 75 %; its continuation's first run
    does ``continuation`` (a reply, or a failure)."""
    data = write_config(root / "data")
    script = data / "climb.toml"
    script.write_text(
        f"""
[[rules]]
match = "continue the work of a previous session"
{continuation}
[[rules]]
match = "seventy-five"
reply = "three quarters"
context_tokens = 150000
[[rules]]
match = "."
reply = "ok"
""",
        encoding="utf-8",
    )
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.climb]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 200000\n'
        )
    return data


def _run(root: Path, data: Path, repo: Path) -> tuple[str, dict[str, object]]:
    done = run_cli(
        "--data-dir",
        str(data),
        "run",
        "--agent",
        "climb",
        "--cwd",
        str(repo),
        "--json",
        "seventy-five per cent",
        home=root,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr, json.loads(done.stdout)


def test_a_continued_handoff_names_its_file_and_the_successor(tmp_path: Path) -> None:
    data, repo = _data(tmp_path, 'reply = "reading it"'), make_repo(tmp_path)
    err, out = _run(tmp_path, data, repo)
    handoff = out["handoff"]
    assert isinstance(handoff, dict)
    assert handoff["result"] == "continued"
    successor = handoff["successor_id"]
    assert isinstance(successor, str)
    path = handoff["document"]["path"]  # type: ignore[index]
    assert Path(path).parent == handoffs_dir(repo)
    assert f"written to {path}" in err
    assert f"its work continues in session {successor}" in err


def test_a_failed_write_says_nothing_was_written_and_that_it_keeps_working(
    tmp_path: Path,
) -> None:
    data, repo = _data(tmp_path, 'reply = "reading it"'), make_repo(tmp_path)
    (repo / ".delegate").write_text("a file where the folder should be")
    err, out = _run(tmp_path, data, repo)
    assert PROMISE not in err
    handoff = out["handoff"]
    assert isinstance(handoff, dict)
    assert handoff["result"] == "write_failed"
    assert handoff["document"] is None
    assert "hand-off NOT written" in err
    assert str(repo) in err
    # Edge case 1: a warning, it keeps working, and the force level stops it.
    assert "keeps working" in err
    assert "90%" in err
    assert "delegate handoff write" in err


def test_a_continuation_that_does_not_start_leaves_the_handoff_pending(tmp_path: Path) -> None:
    data, repo = _data(tmp_path, 'fail = "the agent cannot be reached"'), make_repo(tmp_path)
    err, out = _run(tmp_path, data, repo)
    assert PROMISE not in err
    handoff = out["handoff"]
    assert isinstance(handoff, dict)
    assert handoff["result"] == "spawn_failed"
    assert handoff["successor_id"] is None
    path = handoff["document"]["path"]  # type: ignore[index]
    note = handoffs_dir(repo) / PENDING_NOTE
    assert handoff["pending_note"] == str(note)
    assert note.is_file()
    assert f"written to {path}" in err
    assert "NOT continued" in err
    assert "the agent cannot be reached" in err
    assert str(note) in err
    assert f"delegate handoff continue {path}" in err
