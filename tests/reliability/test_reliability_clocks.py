"""CI size of the clocks trials (full counts: ``run_full.py --only clocks``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from trial_clocks import foreign_trials, lease_trials, step_trials

pytestmark = pytest.mark.reliability


def test_wall_clock_steps_neither_interrupt_a_live_run_nor_hide_a_hung_one(
    tmp_path: Path,
) -> None:
    tally = step_trials(tmp_path, 2, random.Random(1))  # +40 s live; -7,200 s, then hung
    assert tally.trials == 2
    assert tally.clean, tally.summary()


def test_leases_hand_over_within_their_term_whatever_the_clocks_read(tmp_path: Path) -> None:
    tally = lease_trials(tmp_path, 20, 1, random.Random(2))
    assert tally.trials >= 40
    assert tally.clean, tally.summary()


def test_every_command_judges_a_run_of_another_host(tmp_path: Path) -> None:
    tally = foreign_trials(tmp_path, 1, random.Random(3))
    assert tally.trials == 9
    assert tally.clean, tally.summary()
