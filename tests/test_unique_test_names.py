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
