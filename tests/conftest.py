"""Fixtures of the core tests: a real data folder and store under ``tmp_path``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support import write_config

from core.orchestrator import AgentOrchestrator


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder with the test agents configured (``slow``, ``flaky``)."""
    return write_config(tmp_path / "data")


@pytest.fixture
async def orch(data_dir: Path) -> AsyncIterator[AgentOrchestrator]:
    orchestrator = await AgentOrchestrator.open(data_dir)
    yield orchestrator
    await orchestrator.close(wait=False)
