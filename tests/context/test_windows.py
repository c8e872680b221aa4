"""A session's window comes from what is most certain: recorded, configured, its model."""

from __future__ import annotations

import pytest

from core.config import DEFAULT_CONTEXT_LIMIT, ContextSettings
from core.context.windows import window_for
from core.models import WindowSource

DEFAULTS = ContextSettings()


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-haiku-4-5-20251001", 200_000),
        ("claude-opus-4-7", 200_000),
        ("claude-sonnet-4-5-20250929[1m]", 1_000_000),  # Claude Code's 1M-context variant
        ("sonnet[1m]", 1_000_000),
        ("opus", 200_000),
        ("gpt-5.3-codex", 272_000),
        ("GPT-4o-mini", 128_000),
        ("gpt-4.1", 1_047_576),
        ("openai/gpt-4o", 128_000),  # a provider prefix is not part of the family
    ],
)
def test_the_model_table_knows_the_families(model: str, limit: int) -> None:
    assert window_for(model, recorded=None, configured=None, settings=DEFAULTS) == (
        limit,
        WindowSource.MODEL,
    )


def test_a_recorded_window_wins_over_the_model_and_the_configuration() -> None:
    assert window_for("gpt-5.3-codex", recorded=258_400, configured=100_000, settings=DEFAULTS) == (
        258_400,
        WindowSource.RECORDED,
    )


def test_a_configured_limit_wins_over_the_model_table() -> None:
    assert window_for("claude-opus-4-7", recorded=None, configured=150_000, settings=DEFAULTS) == (
        150_000,
        WindowSource.CONFIG,
    )


def test_the_config_table_extends_and_overrides_the_built_in_one() -> None:
    settings = ContextSettings(windows={"claude-opus-4-7": 500_000, "my-local-": 32_768})
    assert window_for("claude-opus-4-7", recorded=None, configured=None, settings=settings) == (
        500_000,
        WindowSource.MODEL,
    )
    assert window_for("my-local-llm", recorded=None, configured=None, settings=settings) == (
        32_768,
        WindowSource.MODEL,
    )
    # The longest prefix is the most specific: other Claude models keep the table's figure.
    assert window_for("claude-opus-4-5", recorded=None, configured=None, settings=settings) == (
        200_000,
        WindowSource.MODEL,
    )


@pytest.mark.parametrize("model", [None, "", "some-unknown-model", "<synthetic>"])
def test_without_anything_known_the_default_window_is_unknown(model: str | None) -> None:
    assert window_for(model, recorded=None, configured=None, settings=DEFAULTS) == (
        DEFAULT_CONTEXT_LIMIT,
        WindowSource.UNKNOWN,
    )


def test_a_zero_or_negative_figure_is_no_figure() -> None:
    assert window_for("opus", recorded=0, configured=0, settings=DEFAULTS) == (
        200_000,
        WindowSource.MODEL,
    )
