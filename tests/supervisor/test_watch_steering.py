"""A transcript on disk does not steer where ``delegate watch`` writes, nor what git runs.

Real ``delegate watch`` processes over a Claude Code projects folder planted with
transcripts (recent, past the hand-off level) whose ``cwd`` names: a folder holding only
a ``.git/config`` with an ``fsmonitor`` command, a system folder, a repository another
user owns, and a repository of ours whose configuration names commands. Only the last
is written in (and none of its commands runs); every other hand-off is kept under the
data folder, and its outcome says why.
"""

from __future__ import annotations

import json
import os
import shlex
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hostile_git import hostile_repo, ran
from support import write_config
from test_cli_watch import Watch

MODEL = "claude-opus-4-5-20251101"  # a 200,000-token window


def plant_transcript(projects: Path, cwd: str, tokens: int = 150_000) -> str:
    """A recent Claude Code transcript whose ``cwd`` is ``cwd`` and whose last call read
    ``tokens`` (75% of the window: past the hand-off level); its session id."""
    sid = str(uuid.uuid4())
    folder = projects / ("-" + uuid.uuid4().hex[:8])
    folder.mkdir(parents=True)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    common = {"sessionId": sid, "cwd": cwd, "timestamp": now, "isSidechain": False}
    lines = [
        {
            **common,
            "type": "user",
            "parentUuid": None,
            "uuid": str(uuid.uuid4()),
            "message": {"role": "user", "content": "carry on with the work"},
        },
        {
            **common,
            "type": "assistant",
            "parentUuid": None,
            "uuid": str(uuid.uuid4()),
            "message": {
                "id": "msg_" + uuid.uuid4().hex,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "text", "text": "working on it"}],
                "usage": {
                    "input_tokens": tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 10,
                },
            },
        },
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / f"{sid}.jsonl").write_text(text, encoding="utf-8")
    return sid


def config_only_folder(folder: Path, markers: Path) -> Path:
    """A folder holding only ``.git/config`` whose ``core.fsmonitor`` touches a marker."""
    (folder / ".git").mkdir(parents=True)
    markers.mkdir(parents=True, exist_ok=True)
    script = folder.parent / "fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(markers / 'fsmonitor'))}\n")
    script.chmod(0o755)
    (folder / ".git" / "config").write_text(f"[core]\n\tfsmonitor = {script}\n")
    return folder


def settled(watch: Watch, sids: dict[str, str]) -> dict[str, dict[str, object]]:
    """Each case's hand-off outcome, as ``watch`` announced it."""
    names = {sid: name for name, sid in sids.items()}
    outcomes: dict[str, dict[str, object]] = {}
    while len(outcomes) < len(sids):
        event = watch.event("handoff_settled")
        name = names.get(str(event["conversation_id"]))
        if name is not None:
            outcomes[name] = event["outcome"]
    return outcomes


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_a_transcript_naming_a_folder_decides_neither_the_writes_nor_git(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    data_dir = write_config(tmp_path / "data")
    projects = tmp_path / "claude" / "projects"
    projects.mkdir(parents=True)
    config_only = config_only_folder(tmp_path / "bare", markers)
    before_bare = files_under(config_only)
    ours = hostile_repo(tmp_path / "ours", markers)
    cases = {
        "bare": plant_transcript(projects, str(config_only)),
        "etc": plant_transcript(projects, "/etc"),
        "ours": plant_transcript(projects, str(ours)),
    }
    theirs = None
    if os.geteuid() == 0:
        theirs = hostile_repo(tmp_path / "theirs", markers)
        for folder, _dirs, names in os.walk(theirs):
            for path in (folder, *(os.path.join(folder, n) for n in names)):
                os.lchown(path, 12345, 12345)
        cases["theirs"] = plant_transcript(projects, str(theirs))
    watch = Watch(
        data_dir, "--json", "--claude-dir", str(tmp_path / "claude"), "--codex-dir", str(tmp_path)
    )
    try:
        outcomes = settled(watch, cases)
    finally:
        assert watch.stop() == 0
    elsewhere = data_dir / "elsewhere"
    for name in ("bare", "etc", *(("theirs",) if theirs else ())):
        outcome = outcomes[name]
        document = outcome["document"]
        assert isinstance(document, dict), outcome
        assert Path(str(document["path"])).is_relative_to(elsewhere), outcome
        assert "is not a repository you work in" in str(outcome["elsewhere"])
        assert str(outcome["folder"]).startswith(str(elsewhere))
    assert files_under(config_only) == before_bare
    assert not Path("/etc/.delegate").exists()
    if theirs is not None:
        assert not (theirs / ".delegate").exists()
    # Our own repository is one we work in: its hand-off is there, git's facts in it.
    document = outcomes["ours"]["document"]
    assert isinstance(document, dict)
    assert Path(str(document["path"])).parent == ours / ".delegate" / "handoffs"
    assert outcomes["ours"]["elsewhere"] is None
    assert (ours / ".delegate" / "handoffs" / "HANDOFF_PENDING.md").is_file()
    assert "src/app.py" in Path(str(document["path"])).read_text(encoding="utf-8")
    assert ran(markers) == []


@pytest.mark.parametrize("shape", ["root", "home", "symlink_to_etc", "missing", "plain"])
def test_write_folder_refuses_folders_nobody_works_in(tmp_path: Path, shape: str) -> None:
    from core.documents.write_folder import write_folder

    cwd: Path
    if shape == "root":
        cwd = Path("/")
    elif shape == "home":
        cwd = Path.home()
    elif shape == "symlink_to_etc":
        cwd = tmp_path / "link"
        cwd.symlink_to("/etc")
    elif shape == "missing":
        cwd = tmp_path / "gone"
    else:
        cwd = tmp_path / "plain"
        cwd.mkdir()
    place = write_folder(cwd, source="claude-code", data_dir=tmp_path / "data")
    assert place.repository is None
    assert place.root.is_relative_to(tmp_path / "data" / "elsewhere")
    assert place.elsewhere is not None
    assert str(cwd) in place.elsewhere
    # A session delegate launched there (a person named the folder), or one inside a
    # folder the person named, is written in its own folder.
    if cwd.is_dir() and shape in ("plain", "symlink_to_etc"):
        launched = write_folder(cwd, source="delegate", data_dir=tmp_path / "data")
        assert launched.trusted
        assert launched.root == cwd.resolve()
        named = write_folder(
            cwd, source="claude-code", data_dir=tmp_path / "data", trusted_folders=[str(cwd)]
        )
        assert named.root == cwd.resolve()
