"""CI size of the hooks install / uninstall trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_hooks_install import concurrent_trials, file_trials

pytestmark = pytest.mark.reliability


def test_install_and_uninstall_give_every_generated_file_back(tmp_path: Path) -> None:
    tally = file_trials(tmp_path, 120)
    assert tally.trials == 240
    assert tally.clean, tally.summary()


def test_concurrent_editors_lose_no_write(tmp_path: Path) -> None:
    tally = concurrent_trials(tmp_path, rounds=1, edits=100)
    assert tally.faults == 300
    assert tally.clean, tally.summary()
