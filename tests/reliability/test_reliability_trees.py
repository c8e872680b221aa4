"""CI size of the hostile-tree trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_trees import tree_trials

pytestmark = pytest.mark.reliability


def test_a_hostile_tree_never_hangs_or_crashes_a_reader(tmp_path: Path) -> None:
    tally = tree_trials(tmp_path, previews=2, step_timeout=30)
    assert tally.clean, tally.summary()
