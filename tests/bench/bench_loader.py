"""Load a benchmark script (not a package module) so its smoke test can call ``main``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_bench(script: str) -> ModuleType:
    """The module of ``tests/bench/<script>``, registered in ``sys.modules``."""
    path = Path(__file__).with_name(script)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
