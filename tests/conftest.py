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


@pytest.fixture(autouse=True)
def demo_agent_by_default(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A launch that names no agent uses the scripted ``echo`` ($DELEGATE_AGENT), so no test
    reaches a real CLI on PATH by accident; tests marked ``real_default_agent`` see the
    default a person gets."""
    if request.node.get_closest_marker("real_default_agent") is None:
        monkeypatch.setenv("DELEGATE_AGENT", "echo")
    else:
        monkeypatch.delenv("DELEGATE_AGENT", raising=False)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder with the test agents configured (``slow``, ``flaky``)."""
    return write_config(tmp_path / "data")


@pytest.fixture
async def orch(data_dir: Path) -> AsyncIterator[AgentOrchestrator]:
    orchestrator = await AgentOrchestrator.open(data_dir)
    yield orchestrator
    await orchestrator.close(wait=False)
