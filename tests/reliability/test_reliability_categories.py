"""The full run's fault categories: each names kinds the run has, and adds them up."""

from __future__ import annotations

from pathlib import Path

from reliability_support import Tally
from run_full import CATEGORIES, category_table, kinds


def test_every_category_names_kinds_the_full_run_has(tmp_path: Path) -> None:
    available = kinds(tmp_path, 1.0)
    for category, names in CATEGORIES.items():
        assert names, category
        assert set(names) <= set(available), category


def test_a_category_adds_up_trials_and_bad_outcomes_of_its_kinds() -> None:
    install = Tally("hooks install", trials=10, faults=10, losses=1)
    handlers = Tally("hook handlers", trials=5, faults=5, hangs=1, survivors=2)
    clocks = Tally("clocks", trials=7, faults=7)
    table = category_table({"hooks-install": install, "hooks-handlers": handlers, "clocks": clocks})
    assert "| hooks | 15 | 4 |" in table.splitlines()
    assert "| clocks | 7 | 0 |" in table.splitlines()
    assert "steering" not in table  # a category that did not run is not shown


def test_no_category_ran_no_table() -> None:
    assert category_table({"races": Tally("follow-up races", trials=3)}) == ""
