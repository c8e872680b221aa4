"""CI size of the hook handler trials (full counts: ``run_full.py --only hooks-handlers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_hooks_handlers import hook_handler_trials

pytestmark = pytest.mark.reliability


def test_a_hook_always_answers_in_its_budget_and_never_gives_an_edited_handoff(
    tmp_path: Path,
) -> None:
    tally = hook_handler_trials(tmp_path, rounds=1)
    assert tally.trials >= 25
    assert tally.clean, tally.summary()
