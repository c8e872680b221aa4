"""Damaged stores: every command gives one typed line, never a traceback or a hang.

Cases, each against a real store made by ``delegate demo``:

- ``garbage header``, ``truncated``, ``newer schema``: every command exits 1
  with ``store_error`` and the file is not changed;
- ``read-only`` (a read-only mount): reading commands work, writing ones give
  a typed error, the file is not changed;
- ``disk full`` (a full tmpfs): every command succeeds or gives a typed
  error, and once there is room again the store is sound.

The two mounts need root; without it those cases are skipped and said so.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from reliability_support import Tally, cli_problem, integrity, new_tag, run_cli, survivors, timed

from core.config import DB_FILENAME

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
STEP_TIMEOUT_S = 45.0


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]
    json_out: bool
    writes: bool


def commands(realdata: Path, shown: str, dismissed: str) -> list[Command]:
    return [
        Command(("sessions", "list", "--json"), True, False),
        Command(("sessions", "list"), False, False),
        Command(("sessions", "show", "--json", shown), True, False),
        Command(("history", "--json"), True, False),
        Command(("tool", "delegate_sessions", '{"operation": "list"}'), True, False),
        Command(("agents", "--json"), True, False),
        Command(("sessions", "dismiss", "--json", dismissed), True, True),
        Command(("run", "--agent", "echo", "hello"), False, True),
        Command(
            (
                "import",
                "--json",
                "--claude-dir",
                str(realdata / "claude"),
                "--codex-dir",
                str(realdata / "codex"),
            ),
            True,
            True,
        ),
        Command((), False, False),  # the panel: must fail before any screen, in one line
    ]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[bool | None]:
    """A tmpfs at ``where`` (True), or False when this process may not mount one."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


@contextlib.contextmanager
def _no_mount() -> Iterator[None]:
    yield None


def _garbage_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[:100] = os.urandom(100)
    db.write_bytes(bytes(data))


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _newer_schema(db: Path) -> None:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA user_version = 999")
        conn.commit()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "garbage header": _garbage_header,
    "truncated": _truncated,
    "newer schema": _newer_schema,
}
CASES = (*DAMAGES, "read-only", "disk full")


def _pristine(work: Path) -> tuple[Path, tuple[str, str]]:
    """A store with demo sessions, checkpointed into one file; and two of their ids."""
    data = work / "pristine"
    shutil.rmtree(data, ignore_errors=True)
    result = run_cli(["--data-dir", str(data), "demo", "--sessions", "5"], home=work, tag=new_tag())
    assert result.code == 0, result.text
    with contextlib.closing(sqlite3.connect(data / DB_FILENAME)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute("SELECT conversation_id FROM sessions LIMIT 2").fetchall()
    return data, (str(rows[0][0]), str(rows[1][0]))


def _fresh_copy(pristine: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    for item in pristine.iterdir():
        if item.is_file():
            shutil.copy2(item, target / item.name)
    return target


def _run_case(
    tally: Tally,
    case: str,
    work: Path,
    data: Path,
    *,
    expect_reads_ok: bool,
    keep_file: bool,
    ids: tuple[str, str],
    quick: bool = False,
    any_typed_error: bool = False,
) -> None:
    """Every command against ``data``.

    ``expect_reads_ok``: reading commands must succeed; else every command must
    fail with ``store_error`` — or, with ``any_typed_error``, succeed or fail
    with any typed error (a full disk may refuse even to open the store).
    """
    db = data / DB_FILENAME
    before = _digest(db)
    chosen = commands(REALDATA, *ids)
    if quick:
        chosen = [c for c in chosen if c.args[:2] in (("sessions", "list"), ("run", "--agent"))]
    for command in chosen:
        if (expect_reads_ok or any_typed_error) and not command.args:
            continue  # a sound store opens the panel, which waits for a terminal
        what = f"{case}: delegate {' '.join(command.args)[:60] or '(panel)'}"
        tally.trials += 1
        tally.faults += 1
        tag = new_tag()
        result = run_cli(
            ["--data-dir", str(data), *command.args], home=work, tag=tag, timeout=STEP_TIMEOUT_S
        )
        tally.add_survivors(survivors(tag, grace_s=2.0), what)
        if result.hung:
            tally.hang(what)
            continue
        problem = cli_problem(result, json_out=command.json_out)
        if problem:
            tally.lose(f"{what}: {problem}")
            continue
        reading = not command.writes and command.args
        if expect_reads_ok and reading:
            if result.code != 0:
                tally.lose(f"{what}: a read failed: {result.text[-200:]!r}")
        elif any_typed_error:
            continue  # cli_problem has judged it: a success or a typed error
        elif not expect_reads_ok and (result.code != 1 or "store_error" not in result.text):
            tally.lose(f"{what}: exit {result.code}, not store_error: {result.text[-200:]!r}")
    if keep_file and _digest(db) != before:
        tally.lose(f"{case}: the store file was changed")


def store_trials(work: Path, *, quick: bool = False, only: set[str] | None = None) -> Tally:
    """Every damaged-store case; see the module doc.

    ``quick``: a few commands per case (reading and writing ones), for CI;
    ``only``: the names of the cases to run (see ``CASES``).
    """
    wanted = set(CASES) if only is None else only
    tally = Tally("damaged stores")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        pristine, ids = _pristine(work)
        for case, damage in DAMAGES.items():
            if case not in wanted:
                continue
            data = _fresh_copy(pristine, work / "damaged")
            damage(data / DB_FILENAME)
            _run_case(
                tally, case, work, data, expect_reads_ok=False, keep_file=True, ids=ids, quick=quick
            )

        mount = work / "mnt"
        with _tmpfs(mount, "8m") if "read-only" in wanted else _no_mount() as mounted:
            if mounted is None:
                pass
            elif not mounted:
                tally.note("skipped read-only: cannot mount a tmpfs (needs root)")
            else:
                data = _fresh_copy(pristine, mount / "data")
                remount = ["mount", "-o", "remount,ro", str(mount)]
                subprocess.run(remount, check=True, capture_output=True)
                _run_case(
                    tally,
                    "read-only",
                    work,
                    data,
                    expect_reads_ok=True,
                    keep_file=True,
                    ids=ids,
                    quick=quick,
                )

        with _tmpfs(mount, "2m") if "disk full" in wanted else _no_mount() as mounted:
            if mounted is None:
                pass
            elif not mounted:
                tally.note("skipped disk full: cannot mount a tmpfs (needs root)")
            else:
                data = _fresh_copy(pristine, mount / "data")
                with contextlib.suppress(OSError), open(mount / "filler", "wb") as f:
                    while True:  # fill every byte left
                        f.write(b"\0" * 65536)
                        f.flush()
                _run_case(
                    tally,
                    "disk full",
                    work,
                    data,
                    expect_reads_ok=False,
                    keep_file=False,
                    ids=ids,
                    quick=quick,
                    any_typed_error=True,
                )
                (mount / "filler").unlink()  # room again: the store must be sound
                check = integrity(data / DB_FILENAME)
                if check != "ok":
                    tally.lose(f"disk full: integrity_check afterwards: {check}")
    return tally
