"""Fixtures of the core tests: a real data folder and store under ``tmp_path``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support import write_config

from core.orchestrator import AgentOrchestrator


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-bench",
        action="store_true",
        help="also run the benchmark smoke tests (marked `bench`); CI runs them separately",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Benchmarks print figures: they leave the default run unless --run-bench is given."""
    if config.getoption("--run-bench"):
        return
    benches = [item for item in items if item.get_closest_marker("bench")]
    if benches:
        config.hook.pytest_deselected(items=benches)
        items[:] = [item for item in items if not item.get_closest_marker("bench")]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder with the test agents configured (``slow``, ``flaky``)."""
    return write_config(tmp_path / "data")


@pytest.fixture
async def orch(data_dir: Path) -> AsyncIterator[AgentOrchestrator]:
    orchestrator = await AgentOrchestrator.open(data_dir)
    yield orchestrator
    await orchestrator.close(wait=False)
