"""CI size of the import kill and signal trials (full counts: ``run_full.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from reliability_support import integrity, new_tag, survivors, tagged_env, tagged_pids
from support import DELEGATE
from trial_import import Reference, import_args, import_signal_trials

from core.config import DB_FILENAME

pytestmark = pytest.mark.reliability


def test_kill_9_mid_import_leaves_a_sound_store_and_no_process(
    corpus: Path, corpus_reference: Reference, tmp_path: Path
) -> None:
    # Mid-import (the worker pool is running): integrity ok, a re-import equals
    # a clean one, and no forkserver, resource tracker or worker is left.
    tally = import_signal_trials(
        corpus, tmp_path, 2, reference=corpus_reference, fractions=(0.4, 0.7)
    )
    assert tally.trials == 2
    assert tally.clean, tally.summary()


def test_sigterm_and_sigint_mid_import_end_it_with_nothing_left(
    corpus: Path, corpus_reference: Reference, tmp_path: Path
) -> None:
    tally = import_signal_trials(
        corpus,
        tmp_path,
        2,
        signals=(signal.SIGTERM, signal.SIGINT),
        reference=corpus_reference,
        fractions=(0.5,),
        kind="import SIGTERM / SIGINT",
    )
    assert tally.trials == 2
    assert tally.clean, tally.summary()


def test_ctrl_c_at_a_terminal_ends_the_import_quietly(
    corpus: Path, corpus_reference: Reference, tmp_path: Path
) -> None:
    # A terminal's Ctrl+C goes to the whole foreground process group: the import's
    # worker processes get SIGINT too. The person sees exit 130 and no traceback,
    # and nothing is left running.
    tag = new_tag()
    err = tmp_path / "stderr"
    with err.open("wb") as stderr:
        proc = subprocess.Popen(
            [str(DELEGATE), *import_args(tmp_path / "data", corpus)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=tmp_path,
            env=tagged_env(tmp_path, tag),
            start_new_session=True,  # its own process group, as a shell gives a command
        )
        # Until the worker pool is parsing: the importer, the forkserver, its resource
        # tracker and at least one worker carry the tag.
        deadline = time.monotonic() + 4 * corpus_reference.seconds + 10
        while len(tagged_pids(tag)) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        assert proc.poll() is None, "the import ended before Ctrl+C"
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(60)
    shown = err.read_text(errors="replace")
    assert code == 130, shown
    assert "Traceback" not in shown, shown
    assert not survivors(tag), "a process of the import outlived it"
    assert integrity(tmp_path / "data" / DB_FILENAME) == "ok"
