"""CI size of the follow-up signal trials (full counts: ``run_full.py``)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from trial_run import run_signal_trials

pytestmark = pytest.mark.reliability


def test_kill_9_of_a_follow_up_leaves_nothing_running_once_read(tmp_path: Path) -> None:
    tally = run_signal_trials(tmp_path, 2, signals=(signal.SIGKILL,), after_s=0.3)
    assert tally.trials == 2
    assert tally.clean, tally.summary()


def test_sigint_and_sighup_end_a_follow_up_keeping_its_partial_reply(tmp_path: Path) -> None:
    tally = run_signal_trials(tmp_path, 2, signals=(signal.SIGINT, signal.SIGHUP), after_s=0.3)
    assert tally.trials == 2
    assert tally.clean, tally.summary()


def test_no_agent_cli_outlives_a_signalled_follow_up(tmp_path: Path) -> None:
    # A stand-in claude that hangs after its first message, with a grandchild.
    tally = run_signal_trials(tmp_path, 3, agent="standin", after_s=0.3)
    assert tally.trials == 3
    assert tally.clean, tally.summary()
