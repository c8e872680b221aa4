"""``capsule_max_tokens``: the sub-agent prompt ceiling capsules are checked against."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import CONFIG_FILENAME, load_settings
from core.errors import InvalidConfig


def test_the_ceiling_defaults_to_5000_and_is_read_from_config(data_dir: Path) -> None:
    assert load_settings(data_dir).capsule_max_tokens == 5000
    (data_dir / CONFIG_FILENAME).write_text("capsule_max_tokens = 8000\n")
    assert load_settings(data_dir).capsule_max_tokens == 8000


@pytest.mark.parametrize("value", ["0", "-5", '"many"'])
def test_a_ceiling_that_is_not_a_positive_count_names_the_field(data_dir: Path, value: str) -> None:
    (data_dir / CONFIG_FILENAME).write_text(f"capsule_max_tokens = {value}\n")
    with pytest.raises(InvalidConfig, match="capsule_max_tokens"):
        load_settings(data_dir)
