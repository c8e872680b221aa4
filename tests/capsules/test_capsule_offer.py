"""Seed 000's launcher offers a capsule: ``delegate run --parent`` without ``--capsule``
says how to carry the parent's context when it has enough to carry; and ``--session``
names a capsule's source session by any marker, as the seed's ``source_session`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capsule_support import capsule_text, make_repo, save

from core.capsules.front_matter import read_front_matter
from tui.cli import main as cli_main

MARKER = "20251023-171812-20251023171813-bc1df3"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _session_with_turns(
    capsys: pytest.CaptureFixture[str], base: list[str], repo: Path, turns: int
) -> str:
    _, out, _ = _run(capsys, *base, "run", "--json", "--cwd", str(repo), "plan the work")
    cid = json.loads(out)["conversation_id"]
    for n in range(turns - 1):
        assert _run(capsys, *base, "run", "--session", cid, f"step {n}")[0] == 0
    return str(cid)


def test_a_launch_under_a_parent_with_context_gets_one_hint_line(
    data_dir: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(data_dir)]
    rich = _session_with_turns(capsys, base, repo, 3)
    code, _, err = _run(capsys, *base, "run", "--cwd", str(repo), "--parent", rich, "child task")
    assert code == 0
    [hint] = [line for line in err.splitlines() if line.startswith("hint:")]
    assert f"delegate capsule request {rich[:8]}" in hint
    assert "--capsule" in hint

    # A capsule of the branch exists: the hint names `--capsule latest` and the file.
    path = save(repo, capsule_text())
    code, _, err = _run(capsys, *base, "run", "--cwd", str(repo), "--parent", rich, "child task")
    [hint] = [line for line in err.splitlines() if line.startswith("hint:")]
    assert "--capsule latest" in hint
    assert path.name in hint

    # Carrying one: no hint.
    code, _, err = _run(
        capsys, *base, "run", "--cwd", str(repo), "--parent", rich, "--capsule", "latest", "go"
    )
    assert code == 0
    assert "hint:" not in err


def test_no_hint_under_a_parent_with_little_context(
    data_dir: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(data_dir)]
    thin = _session_with_turns(capsys, base, repo, 1)
    code, _, err = _run(capsys, *base, "run", "--cwd", str(repo), "--parent", thin, "child task")
    assert code == 0
    assert "hint:" not in err


def test_session_takes_a_free_marker_as_the_source_session(
    data_dir: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(data_dir)]
    code, out, err = _run(
        capsys, *base, "capsule", "new", "--repo", str(repo), "--session", MARKER, "--json"
    )
    assert code == 0, err
    text = Path(json.loads(out)["path"]).read_text(encoding="utf-8")
    lines = text.splitlines()
    closing = lines.index("---", 1)
    front, _problems = read_front_matter(lines[1:closing], 2, closing + 1)
    assert front.source_session == MARKER
    assert json.loads(out)["document"]["source_session"] == MARKER

    code, out, err = _run(
        capsys, *base, "capsule", "prompt", "--repo", str(repo), "--session", MARKER, "--json"
    )
    assert code == 0, err
    assert f"`{MARKER}`" in json.loads(out)["text"]

    # A known session's unique prefix still names that session, in full.
    cid = _session_with_turns(capsys, base, repo, 1)
    code, out, _ = _run(
        capsys, *base, "capsule", "prompt", "--repo", str(repo), "--session", cid[:8], "--json"
    )
    assert f"`{cid}`" in json.loads(out)["text"]


@pytest.mark.parametrize("bad", ["two\nlines", "tab\there", " padded ", "x" * 201])
def test_a_marker_that_cannot_be_one_is_a_clear_error(
    data_dir: Path, repo: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    base = ["--data-dir", str(data_dir)]
    code, _, err = _run(capsys, *base, "capsule", "new", "--repo", str(repo), "--session", bad)
    assert code == 1
    assert "invalid_request" in err
    assert "--session" in err
    assert "Traceback" not in err
    assert not (repo / ".delegate" / "capsules").exists() or not list(
        (repo / ".delegate" / "capsules").rglob("*.md")
    )
