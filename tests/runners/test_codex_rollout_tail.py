"""After a Codex run, the rollout's last token figures are read from a file Codex wrote:
it may be a FIFO, a device or hold absurd numbers, and none of that may hang or break a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.runners.codex import latest_token_info
from core.sources.common import INT64_MAX


def token_count_line(last: object, window: object) -> str:
    info = {"last_token_usage": last, "total_token_usage": last, "model_context_window": window}
    return json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": info}})


def test_a_rollout_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "rollout.jsonl"
    os.mkfifo(fifo)
    # In a child process with a timeout: a blocking open() would hang this test otherwise.
    script = (
        "import sys; from pathlib import Path; from core.runners.codex import latest_token_info;"
        "print(latest_token_info(Path(sys.argv[1])))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(fifo)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


def test_numbers_beyond_64_bits_are_clamped_and_junk_is_zero(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    huge = 10**30
    last = {"input_tokens": huge, "output_tokens": "many"}
    rollout.write_text(token_count_line(last, huge) + "\n", encoding="utf-8")

    info = latest_token_info(rollout)

    assert info is not None
    assert info.last_input_tokens == INT64_MAX
    assert info.last_output_tokens == 0
    assert info.context_window == INT64_MAX
    assert info.total.input_tokens == INT64_MAX


def test_a_usage_that_is_not_an_object_counts_nothing(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(token_count_line([1, 2], 200_000) + "\n", encoding="utf-8")

    info = latest_token_info(rollout)

    assert info is not None
    assert (info.last_input_tokens, info.last_output_tokens) == (0, 0)
    assert info.context_window == 200_000
