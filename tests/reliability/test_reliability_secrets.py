"""CI size of the planted-secret trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_secrets import secret_trials

pytestmark = pytest.mark.reliability


def test_no_planted_secret_survives_and_no_real_text_is_masked(tmp_path: Path) -> None:
    tally = secret_trials(tmp_path, quick=True)
    assert tally.trials > 50_000
    assert tally.faults > 1_000
    assert tally.clean, tally.summary()
