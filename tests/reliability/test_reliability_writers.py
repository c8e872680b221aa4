"""CI size of the writers trials (full counts: ``run_full.py --only writers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_writers import replacement_trials, writer_rounds

pytestmark = pytest.mark.reliability


def test_concurrent_writers_never_hang_and_leave_the_store_sound(tmp_path: Path) -> None:
    tally = writer_rounds(tmp_path, 3)
    assert tally.trials == 3
    assert tally.clean, tally.summary()


def test_a_store_replaced_or_removed_under_a_watch_is_refused_then_restored(
    tmp_path: Path,
) -> None:
    tally = replacement_trials(tmp_path, 3)  # cp, mv, rm
    assert tally.trials == 3
    assert tally.clean, tally.summary()
