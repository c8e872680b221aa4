"""Nothing delegate starts outlives it.

``kill -9`` of ``delegate run`` or ``delegate import``: the agent CLI (and
what it started), the import's pool workers, their forkserver and resource
tracker are all gone shortly after. Processes are counted from ``/proc``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import DELEGATE, cli_env, query, write_config

FAKE_CLAUDE = """#!{python}
import json, os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.environ["FAKE_PIDS"], "a") as fh:
    fh.write(f"{{os.getpid()}} {{child.pid}}\\n")
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :][:1] != "Z"


def survivors(pids: list[int], within: float = 5.0) -> list[int]:
    """The pids still alive once ``within`` seconds have passed (or none are left)."""
    deadline = time.monotonic() + within
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def wait_for_lines(path: Path, count: int, timeout: float = 30) -> list[list[int]]:
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [[int(p) for p in line.split()] for line in lines]
        assert time.monotonic() < deadline, "the fake CLI never started"
        time.sleep(0.02)


@pytest.fixture
def fake_agent(tmp_path: Path) -> tuple[Path, Path]:
    fake = tmp_path / "fake-claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable))
    fake.chmod(0o755)
    pids = tmp_path / "cli-pids"
    data = write_config(
        tmp_path / "data",
        f'\n[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
        f'env = {{ FAKE_PIDS = "{pids}" }}\n',
    )
    return data, pids


def start(tmp_path: Path, data: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(DELEGATE), "--data-dir", str(data), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=cli_env(tmp_path, {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}),
        start_new_session=True,  # like a shell's job: its own group
    )


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_run_leaves_no_agent_cli_running(
    tmp_path: Path, fake_agent: tuple[Path, Path], sig: signal.Signals
) -> None:
    data, pidfile = fake_agent
    proc = start(tmp_path, data, "run", "--agent", "cc", "work for a long time")
    try:
        [cli_pids] = wait_for_lines(pidfile, 1)
        assert all(alive(p) for p in cli_pids)
        os.kill(proc.pid, sig)
        proc.wait(timeout=20)
    finally:
        proc.kill()
    assert survivors(cli_pids) == []


def session_members(sid: int) -> list[int]:
    """Live processes of session ``sid`` (what a killed command started stays in it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and fields[3] == str(sid):
            found.append(int(entry.name))
    return found


REALDATA = Path(__file__).parent / "fixtures" / "realdata" / "claude" / "projects"


def big_claude_tree(root: Path, megabytes: int) -> Path:
    """Enough transcripts that the import parses them in a pool of worker processes."""
    sources = sorted(REALDATA.rglob("*.jsonl"))
    folder = root / "projects" / "-big"
    folder.mkdir(parents=True)
    written, i = 0, 0
    while written < megabytes * 1_000_000:
        data = sources[i % len(sources)].read_bytes() * 8
        (folder / f"00000000-0000-4000-8000-{i:012d}.jsonl").write_bytes(data)
        written += len(data)
        i += 1
    return root


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the import uses no pool on one core")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_import_leaves_no_worker_forkserver_or_tracker(
    tmp_path: Path, sig: signal.Signals
) -> None:
    claude = big_claude_tree(tmp_path / "claude", 48)
    (tmp_path / "codex").mkdir()
    data = write_config(tmp_path / "data")
    proc = start(
        tmp_path,
        data,
        "import",
        "--json",
        "--claude-dir",
        str(claude),
        "--codex-dir",
        str(tmp_path / "codex"),
    )
    try:
        deadline = time.monotonic() + 60
        # The command, the forkserver, the resource tracker and at least one worker.
        while len(members := session_members(proc.pid)) < 4:
            assert proc.poll() is None, "the import ended before its pool started"
            assert time.monotonic() < deadline, f"no pool started: {members}"
            time.sleep(0.05)
        os.kill(proc.pid, sig)
        proc.wait(timeout=20)
    finally:
        proc.kill()
    helpers = [p for p in members if p != proc.pid]
    # A worker still starting (slow on a loaded machine) exits as soon as it runs.
    assert survivors(helpers, within=30) == []


def watchdog_of(pgid: int) -> int:
    """The watchdog that guards agent group ``pgid``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"read goodbye" in b" ".join(argv) and str(pgid).encode() in argv:
            return int(entry.name)
    raise AssertionError(f"no watchdog for group {pgid}")


def test_a_follow_up_stops_an_orphaned_cli_before_starting_another(
    tmp_path: Path, fake_agent: tuple[Path, Path]
) -> None:
    """The watchdog killed too (say, by the OOM killer): the run's recorded agent
    process is found and stopped (its start time checked) before a second CLI
    starts on the same conversation."""
    data, pidfile = fake_agent
    first = start(tmp_path, data, "run", "--agent", "cc", "work for a long time")
    try:
        [orphan] = wait_for_lines(pidfile, 1)
        os.kill(watchdog_of(orphan[0]), signal.SIGKILL)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=20)
    finally:
        first.kill()
    assert all(alive(p) for p in orphan)  # nothing stopped it yet
    [(cid,)] = query(data, "SELECT conversation_id FROM sessions")
    second = start(tmp_path, data, "run", "--session", cid, "carry on")
    try:
        [_, fresh] = wait_for_lines(pidfile, 2)
        assert not any(alive(p) for p in orphan)  # gone before the new CLI started
        assert all(alive(p) for p in fresh)
        second.send_signal(signal.SIGINT)
        second.wait(timeout=20)
    finally:
        second.kill()
        for pid in orphan:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert survivors(fresh) == []
