"""Hostile trees against import, preview, the tools, follow-ups and the panel.

The tree comes from ``tests/hostile_trees.py`` (non-UTF-8 names, FIFOs,
``/dev/zero`` links, directory loops, huge and deep lines, poisoned numbers),
plus sessions whose ids are shaped like options or paths. Every step runs in a
child process under a timeout, so a blocking ``open()`` is counted as a hang:

- ``delegate import``: ends, exit 0, every good session listed;
- preview (``sessions show``) and the tools (``delegate_sessions`` list and
  messages) of every listed session, and of transcripts that became a FIFO or
  a ``/dev/zero`` link after the import;
- a follow-up on each option-shaped id, with stand-in ``claude`` and ``codex``
  on PATH that log their argv: the id never reaches argv where it can be read
  as an option (it is refused with a typed error, or passed as a value);
- the panel (``App.run_test`` over ``tui.app.create_app``) starts, imports the
  tree and quits on ``q``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

from hostile_trees import build_hostile_tree
from reliability_support import (
    CliResult,
    Tally,
    cli_problem,
    new_tag,
    run_cli,
    survivors,
    timed,
)

from core.config import DB_FILENAME

STEP_TIMEOUT_S = 60.0
ROOT = Path(__file__).resolve().parents[2]
OPTION_IDS = ("--dangerously-skip-permissions", "-p", "--last", "--help")
CODEX_OPTION_IDS = ("--last", "--dangerously-bypass-approvals-and-sandbox")

STAND_IN = """#!/bin/sh
printf '%s\\n' "$0" "$@" >> "{log}"
printf '%s\\0' "$@" END-OF-ARGV >> "{log}.argv"
exit 3
"""

PANEL = """
import asyncio, contextlib, sqlite3, sys, time
from pathlib import Path
from tui.app import create_app

def listed(db):
    with contextlib.suppress(sqlite3.Error):
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    return 0

async def main(data, claude, codex, want):
    app = create_app(Path(data), import_sources=(Path(claude), Path(codex)))
    n = 0
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 45
        steady = time.monotonic()
        while time.monotonic() < deadline:  # until the import has settled
            await pilot.pause(0.2)
            now = listed(Path(data) / "delegate.sqlite3")
            if now != n:
                n, steady = now, time.monotonic()
            elif n >= int(want) and time.monotonic() - steady > 2:
                break
        await pilot.pause(0.5)
        await pilot.press("ctrl+q")
        await pilot.pause(0.2)
    print("panel listed", n, "of", want)

asyncio.run(main(*sys.argv[1:]))
"""


def _claude_session(project: Path, sid: str, cwd: Path, name: str | None = None) -> None:
    base = {"cwd": str(cwd), "sessionId": sid, "timestamp": "2026-03-01T10:00:00.000Z"}
    lines = [
        base | {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}},
        base
        | {
            "type": "assistant",
            "uuid": "a1",
            "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "k"}]},
        },
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    (project / f"{name or sid}.jsonl").write_bytes(body)


def _codex_session(day: Path, sid: str, cwd: Path, name: str) -> None:
    ts = "2026-03-01T10:00:00.000Z"
    lines = [
        {"timestamp": ts, "type": "session_meta", "payload": {"id": sid, "cwd": str(cwd)}},
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "hi"},
        },
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    (day / f"rollout-2026-03-01T10-00-00-{name}.jsonl").write_bytes(body)


def add_option_shaped_ids(claude: Path, codex: Path, cwd: Path) -> list[str]:
    """Sessions whose ids read like options or paths; returns those ids."""
    project = claude / "projects" / "-work-options"
    project.mkdir(parents=True, exist_ok=True)
    day = codex / "sessions" / "2026" / "03" / "02"
    day.mkdir(parents=True, exist_ok=True)
    for sid in OPTION_IDS:
        _claude_session(project, sid, cwd)
    _claude_session(project, "../x", cwd, name="0199cccc-0000-7000-8000-000000000001")
    _claude_session(project, "a\nb", cwd, name="0199cccc-0000-7000-8000-000000000002")
    for i, sid in enumerate(CODEX_OPTION_IDS):
        _codex_session(day, sid, cwd, name=f"0199dddd-0000-7000-8000-00000000000{i}")
    return [*OPTION_IDS, *CODEX_OPTION_IDS, "../x", "a\nb"]


def _listed(db: Path) -> dict[str, str]:
    if not db.exists():
        return {}
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT conversation_id, agent_id FROM sessions").fetchall()
    return {str(cid): str(agent) for cid, agent in rows}


def _transcripts(db: Path) -> dict[str, str]:
    """conversation id -> transcript path, from the import index (best effort)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        try:
            rows = conn.execute("SELECT conversation_id, path FROM source_files").fetchall()
        except sqlite3.Error:
            return {}
    return {str(cid): str(path) for cid, path in rows if cid}


ID_OPTIONS = ("--resume", "resume", "--session-id")


def _unsafe_argv(argv: list[str], hostile: set[str]) -> str | None:
    """An id passed as an argument of its own where the CLI parses options.

    ``--resume=ID`` is one argument, and anything after ``--`` is a value.
    """
    for i, arg in enumerate(argv[1:], start=1):
        if "--" in argv[:i]:
            return None
        if arg in hostile and argv[i - 1] in ID_OPTIONS:
            return f"{argv[i - 1]} {arg}"
    return None


def tree_trials(
    work: Path,
    *,
    previews: int | None = None,
    panel: bool = True,
    step_timeout: float = STEP_TIMEOUT_S,
) -> Tally:
    """One hostile tree through every reader; see the module doc."""
    tally = Tally("hostile trees")
    with timed(tally):
        root = work / "tree"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        tree = build_hostile_tree(root)
        hostile_ids = add_option_shaped_ids(tree.claude, tree.codex, root)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        log = root / "argv.log"
        for name in ("claude", "codex"):
            (bin_dir / name).write_text(STAND_IN.format(log=log))
            (bin_dir / name).chmod(0o755)
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        data = work / "tree-data"
        shutil.rmtree(data, ignore_errors=True)
        db = data / DB_FILENAME
        base = ["--data-dir", str(data)]

        def step(
            what: str, args: list[str], *, json_out: bool, timeout: float = step_timeout
        ) -> CliResult | None:
            tally.trials += 1
            tally.faults += 1
            tag = new_tag()
            result = run_cli([*base, *args], home=work, tag=tag, env=env, timeout=timeout)
            tally.add_survivors(survivors(tag, grace_s=2.0), what)
            if result.hung:
                tally.hang(what)
                return None
            problem = cli_problem(result, json_out=json_out)
            if problem:
                tally.lose(f"{what}: {problem}")
                return None
            return result

        claude_dir, codex_dir = str(tree.claude), str(tree.codex)
        imported = step(
            "import",
            ["import", "--json", "--claude-dir", claude_dir, "--codex-dir", codex_dir],
            json_out=True,
            timeout=3 * step_timeout,
        )
        listed = _listed(db)
        if imported is not None:
            missing = set(tree.good) - set(listed)
            if imported.code != 0 or missing:
                tally.lose(f"import: exit {imported.code}, {len(missing)} good sessions missing")

        ids = sorted(listed)[:previews]
        for cid in ids:
            step(
                f"sessions show {cid!r:.60}",
                ["sessions", "show", "--json", "--", cid],
                json_out=True,
            )
            request = json.dumps({"operation": "messages", "conversation_id": cid})
            step(
                f"tool messages {cid!r:.60}", ["tool", "delegate_sessions", request], json_out=True
            )
        step(
            "tool list",
            ["tool", "delegate_sessions", '{"operation": "list", "limit": 100}'],
            json_out=True,
        )

        # Transcripts that became a FIFO or a /dev/zero link after the import.
        swapped = 0
        gone: set[str] = set()  # sessions whose transcript is no longer a regular file
        for cid, path in sorted(_transcripts(db).items()) if db.exists() else []:
            target = Path(path)
            if swapped >= 2 or not target.is_file() or target.is_symlink():
                continue
            target.unlink()
            if swapped == 0:
                os.mkfifo(target)
            else:
                target.symlink_to("/dev/zero")
            swapped += 1
            gone.add(cid)
            kind = "a FIFO" if swapped == 1 else "a /dev/zero link"
            step(f"preview of {kind}", ["sessions", "show", "--json", "--", cid], json_out=True)
            request = json.dumps({"operation": "messages", "conversation_id": cid})
            step(f"messages of {kind}", ["tool", "delegate_sessions", request], json_out=True)

        # Follow-ups on option-shaped ids: refused, or passed where no CLI reads an option.
        for hostile in hostile_ids:
            request = json.dumps({"conversation_id": hostile, "prompt": "hello"})
            step(f"follow-up {hostile!r}", ["tool", "delegate_agent", request], json_out=True)
            step(
                f"run --session={hostile!r}",
                ["run", f"--session={hostile}", "hello"],
                json_out=False,
            )
        argv_log = Path(f"{log}.argv")
        if argv_log.exists():
            calls = argv_log.read_bytes().decode(errors="replace").split("END-OF-ARGV\0")
            for call in calls:
                args = call.split("\0")
                unsafe = _unsafe_argv(args, set(hostile_ids))
                if unsafe:
                    tally.lose(f"an agent CLI got {unsafe!r} where it reads options: {args!r:.300}")

        if panel:
            tally.trials += 1
            tally.faults += 1
            panel_data = work / "panel-data"
            shutil.rmtree(panel_data, ignore_errors=True)
            tag = new_tag()
            script = work / "panel.py"
            script.write_text(PANEL)
            expected = tree.good.keys() - gone
            want = len(expected)
            result = run_cli(
                [str(panel_data), claude_dir, codex_dir, str(want)],
                home=work,
                tag=tag,
                timeout=2 * step_timeout,
                program=[sys.executable, str(script)],
                env={"PYTHONPATH": str(ROOT), **env},
            )
            tally.add_survivors(survivors(tag, grace_s=2.0), "the panel")
            if result.hung:
                tally.hang("the panel did not quit")
            elif result.code != 0 or "Traceback" in result.text:
                tally.lose(f"the panel: exit {result.code}: {result.text[-400:]!r}")
            elif len(_listed(panel_data / DB_FILENAME).keys() & expected) < want:
                tally.lose(f"the panel did not list every good session: {result.text[-200:]!r}")
    return tally
