"""CI size of the damaged-store trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_store import store_trials

pytestmark = pytest.mark.reliability


def test_a_damaged_store_is_one_typed_line_never_a_traceback_or_a_hang(tmp_path: Path) -> None:
    tally = store_trials(tmp_path, quick=True)
    assert tally.clean, tally.summary()
