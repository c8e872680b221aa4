"""CI size of the damaged-store trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_store import store_trials

pytestmark = pytest.mark.reliability


def test_a_damaged_store_is_one_typed_line_never_a_traceback_or_a_hang(tmp_path: Path) -> None:
    only = {"garbage header", "truncated", "newer schema"}
    tally = store_trials(tmp_path, quick=True, only=only)
    assert tally.trials > 0
    assert tally.clean, tally.summary()


def test_a_read_only_store_can_still_be_read(tmp_path: Path) -> None:
    tally = store_trials(tmp_path, quick=True, only={"read-only"})
    if not tally.trials:
        pytest.skip(tally.notes[0])  # a tmpfs needs root
    assert tally.clean, tally.summary()


def test_a_full_disk_gives_typed_errors_and_leaves_the_store_sound(tmp_path: Path) -> None:
    tally = store_trials(tmp_path, quick=True, only={"disk full"})
    if not tally.trials:
        pytest.skip(tally.notes[0])  # a tmpfs needs root
    assert tally.clean, tally.summary()
