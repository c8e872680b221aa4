"""The archive, names, purging and clearing the demo on the command line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from support import json_out, run_cli


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("demo-home")
    data = home / "data"
    result = run_cli("--data-dir", str(data), "demo", "--sessions", "12", home=home)
    assert result.returncode == 0, result.stderr
    return data


@pytest.fixture
def data(demo_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_dir, tmp_path / "data"))


def cli(data_dir: Path, *args: str) -> Any:
    return run_cli("--data-dir", str(data_dir), *args, home=data_dir.parent)


def ids(data: Path, *flags: str) -> list[str]:
    listing = json_out(cli(data, "sessions", "list", "--limit", "100", "--json", *flags))
    return [s["conversation_id"] for s in listing["sessions"]]


def test_dismiss_archives_and_restore_brings_back(data: Path) -> None:
    cid = ids(data)[0]
    dismissed = cli(data, "sessions", "dismiss", cid)
    assert dismissed.returncode == 0, dismissed.stderr
    assert f"archived {cid}" in dismissed.stdout
    assert "restore" in dismissed.stdout  # says how to bring it back
    assert cid not in ids(data)
    assert ids(data, "--archived") == [cid]
    assert json_out(cli(data, "sessions", "show", cid, "--json"))["session"]["archived_at"]

    restored = cli(data, "sessions", "restore", cid[:8])
    assert restored.returncode == 0, restored.stderr
    assert f"restored {cid}" in restored.stdout
    assert cid in ids(data)
    assert ids(data, "--archived") == []


def test_list_sorted_by_creation(data: Path) -> None:
    listing = json_out(
        cli(data, "sessions", "list", "--limit", "100", "--json", "--sort", "created")
    )
    created = [s["created_at"] for s in listing["sessions"]]
    assert len(created) == 12
    assert created == sorted(created, reverse=True)
    bad = cli(data, "sessions", "list", "--sort", "size")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr


def test_rename_shows_the_name_and_an_empty_name_clears_it(data: Path) -> None:
    cid = ids(data)[0]
    renamed = cli(data, "sessions", "rename", cid, "Release checklist")
    assert renamed.returncode == 0, renamed.stderr
    shown = json_out(cli(data, "sessions", "show", cid, "--json"))["session"]
    assert shown["name"] == "Release checklist"
    table = cli(data, "sessions", "list", "--plain")
    assert "Release checklist" in table.stdout
    too_long = cli(data, "sessions", "rename", cid, "x" * 201)
    assert too_long.returncode == 1
    assert "invalid_request" in too_long.stderr
    assert "Traceback" not in too_long.stderr
    cleared = cli(data, "sessions", "rename", cid, "")
    assert cleared.returncode == 0, cleared.stderr
    assert json_out(cli(data, "sessions", "show", cid, "--json"))["session"]["name"] is None


def test_purge_needs_the_archive_or_force(data: Path) -> None:
    first, second = ids(data)[:2]
    refused = cli(data, "sessions", "dismiss", "--purge", first)
    assert refused.returncode == 1
    assert "dismiss_refused" in refused.stderr
    assert first in ids(data)
    assert cli(data, "sessions", "dismiss", first).returncode == 0
    purged = cli(data, "sessions", "dismiss", "--purge", first)
    assert purged.returncode == 0, purged.stderr
    assert f"purged {first}" in purged.stdout
    assert first not in ids(data, "--archived")
    gone = cli(data, "sessions", "show", first, "--json")
    assert json_out(gone)["error"]["code"] == "unknown_conversation"

    forced = cli(data, "sessions", "dismiss", "--purge", "--force", second)
    assert forced.returncode == 0, forced.stderr
    assert second not in ids(data)


def test_demo_clear_removes_the_demo_and_nothing_else(data: Path) -> None:
    run = cli(data, "run", "real work")
    assert run.returncode == 0, run.stderr
    cleared = cli(data, "demo", "--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 12 demo sessions" in cleared.stdout
    assert len(ids(data)) == 1
