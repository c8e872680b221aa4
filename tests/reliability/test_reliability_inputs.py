"""CI size of the hostile-input trials (full counts: ``run_full.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import payload_problem
from support import write_config
from trial_inputs import cli_inputs, importer_inputs, tool_inputs

from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

pytestmark = pytest.mark.reliability


async def test_hostile_tool_requests_get_typed_errors(tmp_path: Path) -> None:
    tally = await tool_inputs(tmp_path)
    assert tally.trials >= 300
    assert tally.clean, tally.summary()


def test_hostile_command_lines_get_typed_errors(tmp_path: Path) -> None:
    tally = cli_inputs(tmp_path, limit=6)  # bytes on stdin: invalid UTF-8, BOMs, NUL
    assert tally.trials == 6
    assert tally.clean, tally.summary()


async def test_hostile_transcript_lines_never_abort_an_import(tmp_path: Path) -> None:
    tally = await importer_inputs(tmp_path)
    assert tally.trials >= 40
    assert tally.clean, tally.summary()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIELDS = ("operation", "conversation_id", "cursor", "limit")


@pytest.fixture(scope="module")
def loop_and_orch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    loop = asyncio.new_event_loop()
    data = write_config(tmp_path_factory.mktemp("hypothesis") / "data")
    orch = loop.run_until_complete(AgentOrchestrator.open(data))
    yield loop, orch
    loop.run_until_complete(orch.close(wait=False))
    loop.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(request=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4))
def test_any_json_request_to_delegate_sessions_is_answered_typed(
    loop_and_orch: Any, request: dict[str, Any]
) -> None:
    loop, orch = loop_and_orch
    answer = loop.run_until_complete(call_tool(orch, "delegate_sessions", request))
    assert payload_problem(answer) is None, answer
