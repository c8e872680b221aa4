"""CI size of the steering trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_steering import steering_trials

pytestmark = pytest.mark.reliability


def test_a_transcript_never_steers_writes_git_or_quotes(tmp_path: Path) -> None:
    tally = steering_trials(tmp_path, rounds=1)
    assert tally.clean, tally.summary()
    assert tally.trials >= 60
