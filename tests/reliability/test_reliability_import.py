"""CI size of the import kill and signal trials (full counts: ``run_full.py``)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from trial_import import Reference, import_signal_trials

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
