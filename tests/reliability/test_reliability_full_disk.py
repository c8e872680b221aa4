"""CI size of the full-disk trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_full_disk import CI_LEVELS, full_disk_trials

pytestmark = pytest.mark.reliability


def test_every_writer_on_a_full_disk_says_disk_full_and_works_once_space_is_freed(
    tmp_path: Path,
) -> None:
    """Full before the start, with the store held open (its -wal and -shm there), and with
    only the repository and settings full."""
    tally = full_disk_trials(tmp_path, levels=CI_LEVELS)
    if not tally.trials:
        pytest.skip(tally.notes[0])  # a tmpfs needs root
    assert tally.trials >= len(CI_LEVELS) * 12
    assert tally.clean, tally.summary()
