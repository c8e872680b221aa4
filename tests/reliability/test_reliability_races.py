"""CI size of the race trials (full counts: ``run_full.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_race import follow_up_races, import_races

pytestmark = pytest.mark.reliability

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"


def test_racing_follow_ups_have_exactly_one_winner(tmp_path: Path) -> None:
    tally = follow_up_races(tmp_path, 4)
    assert tally.trials == 4
    assert tally.clean, tally.summary()


def test_racing_imports_neither_lose_nor_duplicate_a_session(tmp_path: Path) -> None:
    tally = import_races(REALDATA, tmp_path, 2)
    assert tally.trials == 2
    assert tally.clean, tally.summary()
