"""``core`` is the shared engine: it never imports Textual or the front ends."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"
FORBIDDEN = ("textual", "tui")


def imported_modules(source: str) -> set[str]:
    """Every module an import statement names, at any depth (including inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def forbidden(names: set[str]) -> set[str]:
    return {n for n in names if n.split(".")[0] in FORBIDDEN}


def test_the_checker_sees_nested_imports() -> None:
    source = "def f():\n    from textual.app import App\n    import tui.cli as c\nimport json\n"
    assert forbidden(imported_modules(source)) == {"textual.app", "tui.cli"}


CORE_FILES = sorted(CORE.rglob("*.py"))


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_does_not_import_ui(path: Path) -> None:
    names = imported_modules(path.read_text(encoding="utf-8"))
    assert not forbidden(names), f"{path} imports {sorted(forbidden(names))}"


def test_core_has_modules() -> None:
    assert len(CORE_FILES) >= 10


def test_importing_the_core_loads_no_ui() -> None:
    script = textwrap.dedent(
        """
        import sys
        import core.orchestrator, core.tools, core.store, core.demo, core.runners
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "tui"))
        print(",".join(loaded))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
