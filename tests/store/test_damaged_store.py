"""A damaged, read-only or newer store is one clear line, never a traceback or a hang.

Through the console script, each with a timeout: a hang fails the test.
The store file is never changed by a failed open.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import BASE_US, DELEGATE, cli_env, db_path, finished, json_out, run_cli, write_config

from core.migrations import SCHEMA_VERSION
from core.orchestrator import AgentOrchestrator

TIMEOUT = 30  # seconds: far above a normal start; a hang ends here

COMMANDS = (
    ("sessions", "list"),
    ("sessions", "show", "c1"),
    ("history",),
    ("run", "hello"),
    ("sessions", "dismiss", "c1"),
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def _populated(data_dir: Path) -> Path:
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished(f"c{i}", BASE_US + i) for i in range(1, 40)])
        handle = (await orch.delegate(prompt="hello"))[0]
        await handle.wait()
    finally:
        await orch.close()
    path = db_path(data_dir)
    with sqlite3.connect(path) as db:  # everything in the main file, no WAL left over
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def _assert_one_clear_line(result: object, path: Path) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("delegate: store_error: ")
    assert str(path) in lines[0]


def _damage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[:100] = b"\x13garbage header!" * 6 + b"...."
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _newer(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # into the main file, compared below


@pytest.mark.parametrize(
    "damage", [_damage_header, _truncate, _newer], ids=["garbage-header", "truncated", "newer"]
)
async def test_a_damaged_store_is_one_line_and_left_unchanged(
    data_dir: Path, tmp_path: Path, damage: object
) -> None:
    path = await _populated(data_dir)
    damage(path)  # type: ignore[operator]
    before = _digest(path)
    for args in COMMANDS:
        result = run_cli("--data-dir", str(data_dir), *args, home=tmp_path, timeout=TIMEOUT)
        if damage is _truncate and result.returncode == 0:
            continue  # what survives in the first half may still be readable
        _assert_one_clear_line(result, path)
        assert _digest(path) == before, args
    # The JSON tools answer with the typed error too.
    tool = run_cli(
        "--data-dir",
        str(data_dir),
        "tool",
        "delegate_sessions",
        '{"operation": "list"}',
        home=tmp_path,
        timeout=TIMEOUT,
    )
    assert tool.returncode == 1
    assert "Traceback" not in tool.stderr
    assert json_out(tool)["error"]["code"] == "store_error"
    assert _digest(path) == before


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _run_as_owner(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script as the owner of ``home`` (root drops to ``nobody``: root
    writes files whatever their mode, a user cannot)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = AS_NOBODY
    return subprocess.run(
        [*prefix, str(DELEGATE), *args],
        capture_output=True,
        text=True,
        cwd=home,
        env=cli_env(home),
        timeout=TIMEOUT,
        check=False,
    )


def _skip_unless_owner_reaches_checkout() -> None:
    """Root runs the commands as ``nobody``, who must be able to read the checkout's
    console script: a checkout under a private folder (``mktemp -d`` is 0700) is
    out of its reach, and the test cannot say anything there."""
    if os.geteuid() != 0:
        return
    probe = subprocess.run(
        [*AS_NOBODY, "test", "-r", str(DELEGATE)],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged user cannot read {DELEGATE} (a private parent folder)")


@pytest.fixture
def private_home() -> Iterator[Path]:
    """A home folder outside pytest's root-only tree, owned by the user commands run as."""
    home = Path(tempfile.mkdtemp(prefix="delegate-ro-"))
    yield home
    for folder, dirs, _files in os.walk(home):
        for name in dirs:
            (Path(folder) / name).chmod(0o700)
    shutil.rmtree(home, ignore_errors=True)


def _hand_over(home: Path) -> None:
    if os.geteuid() != 0:
        return
    for folder, dirs, files in os.walk(home):
        os.chown(folder, 65534, 65534)
        for name in [*dirs, *files]:
            os.chown(Path(folder) / name, 65534, 65534)


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root needs setpriv to drop"
)
@pytest.mark.parametrize("folder_too", [False, True], ids=["file", "file-and-folder"])
async def test_a_read_only_store_reads_and_refuses_writes_without_hanging(
    private_home: Path, folder_too: bool
) -> None:
    _skip_unless_owner_reaches_checkout()
    data_dir = write_config(private_home / "data")
    path = await _populated(data_dir)
    # An agent configured since the store was last written: nothing to record now.
    config = data_dir / "config.toml"
    config.write_text(config.read_text() + '\n[agents.newer]\nrunner = "scripted"\n')
    _hand_over(private_home)
    path.chmod(stat.S_IRUSR)
    if folder_too:
        data_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    before = _digest(path)
    listed = _run_as_owner(private_home, "--data-dir", str(data_dir), "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert len(json_out(listed)["sessions"]) == 20
    for args in (("sessions", "show", "c1"), ("history",)):
        result = _run_as_owner(private_home, "--data-dir", str(data_dir), *args)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
    for args in (("run", "hello"), ("sessions", "dismiss", "c1")):
        result = _run_as_owner(private_home, "--data-dir", str(data_dir), *args)
        _assert_one_clear_line(result, path)
        assert "read-only" in result.stderr
    assert _digest(path) == before
