"""Kill -9, SIGINT or SIGHUP ``delegate run --session`` while its reply streams.

Two agents:

- a slow scripted agent (in-process: the reply streams word by word), where
  the partial reply can be checked against what was printed;
- a stand-in agent CLI (``claude_code`` runner, a tiny script that prints its
  first message, starts a grandchild and then hangs), where the processes the
  run started can be counted after the signal.

After each signal: the process is gone (SIGINT / SIGHUP: by itself, promptly);
none of its processes is left; once a reader has looked (``sessions show``),
no session is ``running`` or ``pending``; for SIGINT and SIGHUP the printed
part of the reply is stored; the next follow-up succeeds.
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

from reliability_support import Cli, Tally, new_tag, run_cli, states, survivors, timed
from support import write_config

from core.config import DB_FILENAME

SIGNALS = (signal.SIGKILL, signal.SIGINT, signal.SIGHUP)
SIGNAL_EXIT_S = 15.0  # SIGINT / SIGHUP end the run at once; far more than enough
FIRST_CHUNK_S = 30.0
WORDS = 40  # the reply echoes the prompt: 40 words at 0.05 s, about 2 s in flight

STAND_IN_CLI = """#!{python}
import json, os, subprocess, sys, time
prompt = sys.argv[-1]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
print(json.dumps({{"type": "assistant", "message": {{"id": "m1", "content": [
    {{"type": "text", "text": "working on it"}}]}}}}), flush=True)
if "slow" in prompt:
    time.sleep(600)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "result": "done", "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
child.kill()
"""


def _data_dir(work: Path) -> Path:
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    cli = work / "stand-in-claude"
    cli.write_text(STAND_IN_CLI.format(python=sys.executable), encoding="utf-8")
    cli.chmod(0o755)
    return write_config(
        data,
        f"""
[agents.standin]
runner = "claude_code"
binary = "{cli}"
""",
    )


def _launch(work: Path, data: Path, agent: str) -> str:
    """A finished first turn with ``agent``; returns its conversation id."""
    result = run_cli(
        ["--data-dir", str(data), "run", "--agent", agent, "hello"], home=work, tag=new_tag()
    )
    found = re.search(r"in conversation (\S+)", result.stderr.decode(errors="replace"))
    assert result.code == 0, f"the first turn failed: {result.text[-1000:]}"
    assert found, f"no conversation id in: {result.text[-1000:]}"
    return found.group(1)


def _latest_run(db: Path, conversation_id: str) -> tuple[str, str, str]:
    """(run_id, status, stored reply of that run) of the newest run."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        run_id, status, output = conn.execute(
            "SELECT run_id, status, output FROM runs WHERE conversation_id = ?"
            " ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        replies = conn.execute(
            "SELECT content FROM messages WHERE run_id = ? AND role = 'assistant' ORDER BY seq",
            (run_id,),
        ).fetchall()
    return run_id, status, output + "".join(r[0] for r in replies)


def _wait_for_output(proc: Cli, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out, _ = proc.output()
        if out.strip():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def run_signal_trials(
    work: Path,
    trials: int,
    *,
    agent: str = "slow",
    signals: tuple[signal.Signals, ...] = SIGNALS,
    seed: int = 11,
    kind: str | None = None,
    after_s: float | None = None,
) -> Tally:
    """``trials`` follow-ups, each signalled once mid-reply; see the module doc.

    The signal comes a random 0..1.2 s after the first printed chunk, or
    ``after_s`` after it for a deterministic run.
    """
    rng = random.Random(seed)
    tally = Tally(kind or f"run signals ({agent})")
    work.mkdir(parents=True, exist_ok=True)
    with timed(tally):
        data = _data_dir(work)
        db = data / DB_FILENAME
        conversation = _launch(work, data, agent)
        for trial in range(trials):
            if tally.out_of_time():
                break
            if trial:
                tally.progress()
            sig = signals[trial % len(signals)]
            where = f"trial {trial} ({sig.name})"
            tally.trials += 1
            tag = new_tag()
            words = " ".join(f"w{trial}x{i}" for i in range(WORDS))
            prompt = f"slow {words}" if agent == "standin" else words
            args = ["--data-dir", str(data), "run", "--session", conversation, prompt]
            proc = Cli(args, home=work, tag=tag)
            if not _wait_for_output(proc, FIRST_CHUNK_S):
                result = proc.wait(SIGNAL_EXIT_S)
                tally.add_survivors(survivors(tag), where)
                if result.hung:
                    tally.hang(f"{where}: no reply within {FIRST_CHUNK_S:.0f} s")
                else:
                    tally.lose(f"{where}: the follow-up ended early: {result.text[-300:]!r}")
                conversation = _launch(work, data, agent)  # start again from a sound session
                continue
            time.sleep(rng.uniform(0.0, 1.2) if after_s is None else after_s)
            if proc.poll() is None:
                proc.send_signal(sig)
                tally.faults += 1
            result = proc.wait(SIGNAL_EXIT_S)
            if result.hung:
                tally.hang(f"{where}: still running {SIGNAL_EXIT_S:.0f} s after the signal")
            tally.add_survivors(survivors(tag), where)

            reader_tag = new_tag()
            reader = run_cli(
                ["--data-dir", str(data), "sessions", "show", conversation, "--json"],
                home=work,
                tag=reader_tag,
            )
            tally.add_survivors(survivors(reader_tag), f"{where}, reader")
            if reader.code != 0:
                tally.lose(f"{where}: the reader failed: {reader.text[-300:]!r}")
            stuck = {c: s for c, s in states(db).items() if s in ("running", "pending")}
            if stuck:
                tally.lose(f"{where}: left {stuck} after a reader")
            if agent != "standin":
                _check_partial(tally, where, sig, db, conversation, result.stdout.decode())

            next_tag = new_tag()
            nxt = run_cli(
                ["--data-dir", str(data), "run", "--session", conversation, "and now?"],
                home=work,
                tag=next_tag,
            )
            tally.add_survivors(survivors(next_tag), f"{where}, next follow-up")
            if nxt.hung:
                tally.hang(f"{where}: the next follow-up hung")
            elif nxt.code != 0:
                tally.lose(f"{where}: the next follow-up failed: {nxt.text[-300:]!r}")
    return tally


def _check_partial(
    tally: Tally, where: str, sig: signal.Signals, db: Path, conversation: str, printed: str
) -> None:
    """What was printed before SIGINT / SIGHUP is stored; nothing is ever half-written."""
    _run_id, status, stored = _latest_run(db, conversation)
    shown = printed.strip()
    if status == "completed":
        return  # the signal landed as the run finished: nothing was cut short
    kept = stored.strip()
    if kept and not (kept.startswith(shown) or shown.startswith(kept)):
        tally.lose(f"{where}: stored reply {stored[:80]!r} is not what was printed {shown[:80]!r}")
    elif sig is not signal.SIGKILL and shown and not kept.startswith(shown):
        tally.lose(f"{where}: printed {shown[:80]!r}… but stored {stored[:80]!r} ({status})")
