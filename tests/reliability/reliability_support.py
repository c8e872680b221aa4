"""The reliability harness: tallies, tagged processes, timeouts, typed-error checks.

Every trial of every kind runs its processes under a fresh *tag*: an
environment variable every child inherits (the forkserver, its resource
tracker, pool workers and agent CLIs included). After a trial, any live process
still carrying the tag is a *survivor*; it is counted, then killed, so one bad
trial never leaks into the next.

Every wait has a timeout, so a hang is counted as a hang instead of stalling
the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import DELEGATE, cli_env

from core import errors

TAG_VAR = "DELEGATE_RELIABILITY_TAG"
# How long processes get to die after their parent did (a parent-death signal or a
# closed pipe reaches them within milliseconds, but a 2-core machine at load 8 to 12
# took over 5 s to schedule them; one still alive after this is a survivor).
SURVIVOR_GRACE_S = 15.0
CLI_TIMEOUT_S = 60.0
NOTES_KEPT = 8


# A wall-clock budget for a full run (seconds since the epoch): trials stop
# starting once it has passed, and the tally says how many ran.
_deadline: float | None = None


def set_deadline(at_epoch_s: float | None) -> None:
    global _deadline
    _deadline = at_epoch_s


@dataclass
class Tally:
    """What one kind of trial measured.

    ``faults`` are the faults that landed (a signal delivered while the target
    was still running, a hostile input delivered); ``losses`` are trials that
    broke the kind's invariant (store damaged, a session lost, duplicated or
    stuck, a partial reply lost, a traceback or an untyped error, two winners).
    """

    kind: str
    trials: int = 0
    faults: int = 0
    hangs: int = 0
    survivors: int = 0
    losses: int = 0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def out_of_time(self) -> bool:
        """True once the run's time budget has passed (noted once, with the count so far)."""
        if _deadline is None or time.time() < _deadline:
            return False
        if not any(n.startswith("stopped") for n in self.notes):
            self.notes.insert(0, f"stopped at the time budget after {self.trials} trials")
        return True

    def progress(self) -> None:
        """One line per trial on stderr, so a long run shows where it is."""
        print(
            f"  {self.kind}: {self.trials} trials, {self.faults} faults, {self.hangs} hangs,"
            f" {self.survivors} survivors, {self.losses} losses",
            file=sys.stderr,
            flush=True,
        )

    def note(self, text: str) -> None:
        if len(self.notes) < NOTES_KEPT:
            self.notes.append(text[:600])

    def lose(self, text: str) -> None:
        self.losses += 1
        self.note(f"loss: {text}")

    def hang(self, text: str) -> None:
        self.hangs += 1
        self.note(f"hang: {text}")

    def add_survivors(self, pids: Sequence[int], where: str) -> None:
        if pids:
            self.survivors += len(pids)
            self.note(f"survivors after {where}: {describe(pids)}")

    def merge(self, other: Tally) -> None:
        self.trials += other.trials
        self.faults += other.faults
        self.hangs += other.hangs
        self.survivors += other.survivors
        self.losses += other.losses
        self.wall_s += other.wall_s
        for text in other.notes:
            self.note(text)

    @property
    def clean(self) -> bool:
        return self.hangs == 0 and self.survivors == 0 and self.losses == 0

    def summary(self) -> str:
        head = (
            f"{self.kind}: {self.trials} trials, {self.faults} faults, {self.hangs} hangs,"
            f" {self.survivors} survivors, {self.losses} losses in {self.wall_s:.1f} s"
        )
        return "\n  ".join([head, *self.notes])


@contextlib.contextmanager
def timed(tally: Tally) -> Iterator[Tally]:
    started = time.monotonic()
    try:
        yield tally
    finally:
        tally.wall_s += time.monotonic() - started


# --- processes ------------------------------------------------------------


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged_env(home: Path, tag: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The console script's test environment, plus the trial's tag."""
    return cli_env(home, {TAG_VAR: tag, **(extra or {})})


def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :][:1] in (b"Z", b"X")


def tagged_pids(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``tag``."""
    marker = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        if marker in _environ(pid).split(b"\0") and not _is_zombie(pid):
            found.append(pid)
    return sorted(found)


def describe(pids: Sequence[int]) -> str:
    names = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            argv = "?"
        names.append(f"{pid} {argv[:90]}")
    return "; ".join(names)


def survivors(tag: str, grace_s: float = SURVIVOR_GRACE_S) -> list[int]:
    """Processes of the trial still alive after ``grace_s``; they are then killed."""
    deadline = time.monotonic() + grace_s
    while (left := tagged_pids(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:  # ours (they carry this trial's tag): clean up for the next trial
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


# --- the console script -----------------------------------------------------


@dataclass
class CliResult:
    code: int | None  # None: it hung and was killed at the timeout
    stdout: bytes
    stderr: bytes

    @property
    def hung(self) -> bool:
        return self.code is None

    @property
    def text(self) -> str:
        return (self.stdout + self.stderr).decode("utf-8", errors="replace")


class Cli:
    """A ``delegate`` process whose output goes to files, not pipes.

    A process it leaves behind (the bug being counted) may hold inherited pipes
    open forever; files never block the harness reading them.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        home: Path,
        tag: str,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        program: Sequence[str] | None = None,
    ) -> None:
        home.mkdir(parents=True, exist_ok=True)
        # Closed in wait(): they outlive this call by design.
        self._out = tempfile.TemporaryFile(dir=home)  # noqa: SIM115
        self._err = tempfile.TemporaryFile(dir=home)  # noqa: SIM115
        with tempfile.TemporaryFile(dir=home) as source:
            source.write(stdin or b"")
            source.seek(0)
            self.proc = subprocess.Popen(
                [*(program or [str(DELEGATE)]), *args],
                stdin=source,
                stdout=self._out,
                stderr=self._err,
                cwd=home,
                env=tagged_env(home, tag, env),
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def send_signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    def output(self) -> tuple[bytes, bytes]:
        """Everything written to stdout and stderr so far."""
        return _read_all(self._out), _read_all(self._err)

    def wait(self, timeout: float) -> CliResult:
        """The process's outcome; past ``timeout`` it is killed and the result marked hung."""
        try:
            code: int | None = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        out, err = self.output()
        self._out.close()
        self._err.close()
        return CliResult(code, out, err)


def _read_all(f: Any) -> bytes:
    f.flush()
    return os.pread(f.fileno(), os.fstat(f.fileno()).st_size, 0)


def run_cli(
    args: Sequence[str],
    *,
    home: Path,
    tag: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = CLI_TIMEOUT_S,
    program: Sequence[str] | None = None,
) -> CliResult:
    """Run ``delegate ARGS`` (or ``PROGRAM ARGS``) under ``tag``.

    A run past ``timeout`` is killed and marked hung.
    """
    return Cli(args, home=home, tag=tag, env=env, stdin=stdin, program=program).wait(timeout)


# --- typed errors -----------------------------------------------------------


def _codes(cls: type[errors.DelegateError]) -> set[str]:
    found = {cls.code}
    for sub in cls.__subclasses__():
        found |= _codes(sub)
    return found


def known_codes() -> set[str]:
    """Every stable code of a typed error, except the catch-all ``internal_error``."""
    return _codes(errors.DelegateError) - {"internal_error"}


def payload_problem(payload: Any) -> str | None:
    """None if ``payload`` is a success or a typed error payload, else what is wrong."""
    if not isinstance(payload, dict):
        return f"not a JSON object: {payload!r:.200}"
    if payload.get("status") != "error":
        return None
    error = payload.get("error")
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return f"error without a message: {payload!r:.200}"
    if error.get("code") not in known_codes():
        return f"untyped error code {error.get('code')!r}: {error.get('message')!r:.200}"
    return None


def cli_problem(result: CliResult, *, json_out: bool) -> str | None:
    """None if a CLI run ended cleanly or with a typed error; else what is wrong."""
    text = result.text
    if "Traceback (most recent call last)" in text:
        return f"traceback: {text.strip().splitlines()[-1][:300]!r}"
    if result.code not in (0, 1, 2):
        return f"exit {result.code}: {text[-300:]!r}"
    if result.code == 2:  # argparse's usage error: the option or value named, no traceback
        return None if b"usage:" in result.stderr else f"exit 2 without usage: {text[-300:]!r}"
    if json_out and result.stdout.strip():
        try:
            payload = json.loads(result.stdout.splitlines()[-1])
        except ValueError:
            payload = None
        if payload is not None:
            return payload_problem(payload) if isinstance(payload, dict) else None
    if result.code == 1 and b"\nrun failed: " in result.stderr:
        return None  # `delegate run`: the agent's own failure, reported as such
    if result.code == 1:
        line = result.stderr.decode("utf-8", errors="replace")
        codes = known_codes()
        if not any(f"{code}" in line for code in codes) and not json_out:
            return f"exit 1 without a typed code: {text[-300:]!r}"
        if json_out and not result.stdout.strip() and not any(c in line for c in codes):
            return f"exit 1 without a typed code: {text[-300:]!r}"
    return None


# --- the store --------------------------------------------------------------


def integrity(db: Path) -> str:
    """``PRAGMA integrity_check`` of a store file, read-only ("ok" when sound)."""
    if not db.exists():
        return "ok"  # killed before the store was created: nothing to damage
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.Error as exc:
        return f"cannot check: {exc}"
    return "; ".join(str(r[0]) for r in rows)


SESSION_COLUMNS = (
    "conversation_id",
    "agent_id",
    "parent_id",
    "source",
    "title",
    "cwd",
    "git_branch",
    "turns",
    "message_count",
    "context_tokens",
)


def session_rows(db: Path) -> list[tuple[Any, ...]]:
    """What an import is judged by: each session's identity and metrics."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        cols = ", ".join(SESSION_COLUMNS)
        return sorted(conn.execute(f"SELECT {cols} FROM sessions").fetchall(), key=repr)


def states(db: Path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return dict(conn.execute("SELECT conversation_id, state FROM sessions").fetchall())
