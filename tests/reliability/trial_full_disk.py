"""A full disk under every writing command: one typed ``disk_full``, nothing half-written,
and the same command works once space is freed.

The data folder, a git repository and the agents' settings folders live on a small
tmpfs. Each trial makes a fresh session (with room), fills the file system to a
*level* — full before the command starts (0 bytes left), or a little room left so
the command fills it while it writes — runs one command as a person would (the
console script), frees the space and runs the same command again.

A bad outcome (a loss) is any of: a traceback; an exit status other than 0 or 1; an
exit 1 or a JSON error whose code is not ``disk_full``; a store that fails
``PRAGMA integrity_check``; a temporary or empty file left in the repository's
``.delegate/``, the data folder or a settings folder; the command failing once space
is freed. Mounting needs root: without it the kind is skipped and says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from full_disk import SmallDisk, small_disk
from reliability_support import Cli, CliResult, Tally, integrity, new_tag, run_cli, survivors, timed

from core.config import DB_FILENAME

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
STEP_TIMEOUT_S = 60.0
WATCH_UP_S = 20.0


@dataclass(frozen=True)
class Level:
    """How full, and what is open, when the command starts.

    ``leave``: bytes left free (0: full before it starts; else it fills while it
    writes: a store page, the WAL, a hand-off, a settings file). ``held``: another
    process holds the store open (a watch, the panel), so its ``-wal`` and ``-shm``
    exist. ``data_elsewhere``: the data folder has room; only the repository and the
    agents' settings are on the full disk (the document writers' own refusal).
    """

    leave: int
    held: bool = False
    data_elsewhere: bool = False

    def __str__(self) -> str:
        where = ", store elsewhere" if self.data_elsewhere else ""
        return f"{self.leave // 1024} KiB left{', store held open' if self.held else ''}{where}"


LEVELS = (
    Level(0),
    Level(0, held=True),
    Level(16 * 1024, held=True),
    Level(64 * 1024),
    Level(256 * 1024, held=True),
    Level(0, data_elsewhere=True),
    Level(8 * 1024, data_elsewhere=True),
)
CI_LEVELS = (Level(0), Level(0, held=True), Level(0, data_elsewhere=True))


@dataclass
class Place:
    """Where one run of the trials writes: all on the small disk but ``home``."""

    disk: SmallDisk
    home: Path  # HOME and the harness's output files: never on the full disk
    data: Path
    repo: Path
    data_on_disk: Path
    data_elsewhere: Path
    serial: int = 0
    refused: int = 0  # trials that answered disk_full
    succeeded: int = 0  # trials that found room enough

    def next(self) -> int:
        self.serial += 1
        return self.serial


@dataclass(frozen=True)
class Command:
    name: str
    args: Callable[[Place, str, int], list[str]]
    json_out: bool = False


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


COMMANDS: tuple[Command, ...] = (
    Command("follow-up", lambda p, cid, n: ["run", "--session", cid, f"again {n}"]),
    Command(
        "launch", lambda p, cid, n: ["run", "--agent", "echo", "--cwd", str(p.repo), f"new {n}"]
    ),
    Command(
        "tool launch",
        lambda p, cid, n: [
            "tool",
            "delegate_agent",
            json.dumps({"agent_id": "echo", "prompt": f"tool {n}", "cwd": str(p.repo)}),
        ],
        json_out=True,
    ),
    Command("rename", lambda p, cid, n: ["sessions", "rename", cid, f"name {n} " + "x" * 150]),
    Command("demo", lambda p, cid, n: ["demo", "--sessions", str(5 + n)]),
    Command("handoff write", lambda p, cid, n: ["handoff", "write", cid]),
    Command("watch", lambda p, cid, n: ["watch", "--no-transcripts"]),
    Command("capsule new", lambda p, cid, n: ["capsule", "new", "--repo", str(p.repo)]),
    Command(
        "capsule remember",
        lambda p, cid, n: ["capsule", "remember", "--repo", str(p.repo), f"remember {n} " * 40],
    ),
    Command(
        "import",
        lambda p, cid, n: [
            "import",
            "--json",
            "--claude-dir",
            str(REALDATA / "claude"),
            "--codex-dir",
            str(REALDATA / "codex"),
        ],
        json_out=True,
    ),
    Command("archive", lambda p, cid, n: ["sessions", "dismiss", "--json", cid], json_out=True),
    Command(
        "hooks install",
        lambda p, cid, n: [
            "hooks",
            "install",
            "claude-code",
            "--agent-dir",
            str(p.disk.root / "agents" / f"claude-{n}"),
        ],
    ),
)
NAMES = tuple(c.name for c in COMMANDS)


def _cli(place: Place, args: list[str], tag: str) -> CliResult:
    return run_cli(
        ["--data-dir", str(place.data), *args],
        home=place.home,
        tag=tag,
        env={"DELEGATE_AGENT": "echo"},
        timeout=STEP_TIMEOUT_S,
    )


def _watch(place: Place, args: list[str], tag: str, *, must_run: bool) -> CliResult:
    """``delegate watch``: it either refuses at once, or runs and stops on SIGINT."""
    cli = Cli(
        ["--data-dir", str(place.data), *args],
        home=place.home,
        tag=tag,
        env={"DELEGATE_AGENT": "echo"},
    )
    deadline = time.monotonic() + WATCH_UP_S
    while cli.poll() is None and time.monotonic() < deadline:
        out, _err = cli.output()
        if b"follower" in out or b"leader" in out or b"leads" in out:
            if not must_run:
                time.sleep(0.5)  # a refusal follows its first status line
            break
        time.sleep(0.1)
    cli.send_signal(signal.SIGINT)
    return cli.wait(STEP_TIMEOUT_S)


def _session(place: Place, tag: str) -> str | None:
    """A fresh session whose folder is the repository on the small disk (with room)."""
    result = _cli(
        place, ["run", "--agent", "echo", "--json", "--cwd", str(place.repo), "seed"], tag
    )
    try:
        return str(json.loads(result.stdout.splitlines()[-1])["conversation_id"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _problem(result: CliResult, command: Command) -> str | None:
    """None if the run succeeded or refused with ``disk_full``; else what is wrong."""
    text = result.text
    if "Traceback (most recent call last)" in text:
        return f"traceback: {text.strip().splitlines()[-1][:300]!r}"
    if result.code not in (0, 1):
        return f"exit {result.code}: {text[-300:]!r}"
    if command.json_out and result.stdout.strip():
        try:
            payload = json.loads(result.stdout.splitlines()[-1])
        except ValueError:
            return f"not JSON: {result.stdout[-300:]!r}"
        if isinstance(payload, dict) and payload.get("status") == "error":
            code = (payload.get("error") or {}).get("code")
            return (
                None if code == "disk_full" else f"error {code!r}, not disk_full: {text[-300:]!r}"
            )
    if result.code == 1 and "disk_full" not in text:
        return f"exit 1 without disk_full: {text[-300:]!r}"
    return None


def _leftovers(place: Place) -> list[str]:
    """Temporary or empty files: a write that stopped half way."""
    found = []
    for root in (place.data, place.repo / ".delegate", place.disk.root / "agents"):
        if not root.exists():
            continue
        for path in root.rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            name = path.name
            empty = path.stat().st_size == 0 and not name.endswith(("-wal", ".lock", ".log"))
            if name.endswith(".tmp") or (name.startswith(".") and ".json." in name) or empty:
                found.append(str(path.relative_to(place.disk.root)))
    return found


@contextlib.contextmanager
def _held(db: Path, hold: bool) -> Iterator[None]:
    """The store open in this process (its -wal and -shm kept), as a watch holds it."""
    if not hold:
        yield
        return
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("SELECT count(*) FROM sessions").fetchall()
        yield


def _one(tally: Tally, place: Place, command: Command, level: Level) -> None:
    what = f"{command.name} with {level}"
    leave = level.leave
    n = place.next()
    seed_tag = new_tag()
    cid = _session(place, seed_tag)
    survivors(seed_tag, grace_s=2.0)
    if cid is None:
        tally.lose(f"{what}: could not make a session with room to spare")
        return
    args = command.args(place, cid, n)
    tally.trials += 1
    tag = new_tag()
    with _held(place.data / DB_FILENAME, level.held):
        place.disk.fill(leave)
        tally.faults += 1
        try:
            if command.name == "watch":
                result = _watch(place, args, tag, must_run=False)
            else:
                result = _cli(place, args, tag)
        finally:
            tally.add_survivors(survivors(tag, grace_s=2.0), what)
            place.disk.free()
    if result.hung:
        tally.hang(what)
        return
    problem = _problem(result, command)
    if problem:
        tally.lose(f"{what}: {problem}")
    left = _leftovers(place)
    if left:
        tally.lose(f"{what}: half-written files left: {left[:5]}")
        for name in left:
            with contextlib.suppress(OSError):
                (place.disk.root / name).unlink()
    check = integrity(place.data / DB_FILENAME)
    if check != "ok":
        tally.lose(f"{what}: integrity_check: {check}")
    if result.code == 0:
        place.succeeded += 1
        return
    place.refused += 1
    # Room again: the very same command works.
    again_tag = new_tag()
    if command.name == "watch":
        again = _watch(place, args, again_tag, must_run=True)
        ran = again.code == 0 and (b"follower" in again.stdout or b"lead" in again.stdout)
    else:
        again = _cli(place, args, again_tag)
        ran = again.code == 0
    tally.add_survivors(survivors(again_tag, grace_s=2.0), f"{what}, again")
    if again.hung:
        tally.hang(f"{what}, again with room")
    elif not ran:
        tally.lose(f"{what}: fails once space is freed: {again.text[-300:]!r}")


def full_disk_trials(
    work: Path,
    *,
    levels: tuple[Level, ...] = LEVELS,
    only: set[str] | None = None,
    size: str = "16m",
) -> Tally:
    """Every writing command (``only``: these names of ``NAMES``) at every fill level."""
    tally = Tally("full disk (every writer)")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally), small_disk(work / "mnt", size) as disk:
        if isinstance(disk, str):
            tally.note(f"skipped: {disk}")
            return tally
        on_disk, elsewhere = disk.root / "data", work / "data-elsewhere"
        place = Place(disk, work / "home", on_disk, disk.root / "repo", on_disk, elsewhere)
        place.home.mkdir(parents=True, exist_ok=True)
        place.repo.mkdir()
        _git(place.repo, "init", "-q")
        _git(place.repo, "commit", "-q", "--allow-empty", "-m", "start")
        for data in (on_disk, elsewhere):
            place.data = data
            seeded = _cli(place, ["demo", "--sessions", "5"], new_tag())
            if seeded.code != 0:
                tally.lose(f"demo store: {seeded.text[-300:]!r}")
                return tally
        for level in levels:
            place.data = elsewhere if level.data_elsewhere else on_disk
            for command in COMMANDS:
                if only is not None and command.name not in only:
                    continue
                if tally.out_of_time():
                    return tally
                _one(tally, place, command, level)
                tally.progress()
        tally.note(f"{place.refused} refused with disk_full, {place.succeeded} found room enough")
    return tally
