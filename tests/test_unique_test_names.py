"""Test modules are imported by their base name (no packages): two with one name in
different folders stop the whole suite at collection, so each name is unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent


def test_every_test_module_name_is_unique() -> None:
    names = Counter(
        path.name
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py" and "__pycache__" not in path.parts
    )
    assert [name for name, count in names.items() if count > 1] == []


def test_no_module_imports_a_conftest() -> None:
    # Every folder's conftest is the module "conftest": whichever folder pytest
    # imported first answers `from conftest import ...` for all, so running two
    # folders together failed at collection. Shared helpers live in named modules.
    importers = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if "__pycache__" not in path.parts
        and any(
            line.startswith(("from conftest import", "import conftest"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert importers == []
