"""Finding a message in a transcript file, reading backwards from a point.

The transcript view searches from the newest message back; like the preview
(:mod:`core.sources.preview`) this streams the file in 64 KiB chunks from the
end and holds one capped line at a time, so a search costs what lies between
the starting point and the match, never the whole file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.sources.lines import BackwardLines, BadLine, loads
from core.sources.preview import converter
from core.sources.safe_files import open_regular

_PLAIN = re.compile(r"[a-z0-9 .,:;_\-]+")


@dataclass(frozen=True)
class FoundLine:
    """Where the matching message's line is: ``offset`` its start, ``end`` just past it."""

    offset: int
    end: int
    bytes_read: int


def find_before(
    path: str,
    source: str,
    conversation_id: str,
    text: str,
    before: int | None,
    prompts_in_items: bool = False,
) -> FoundLine | None:
    """The newest message before byte ``before`` (the end when None) whose shown
    text contains ``text`` (case-insensitive), or None when no older one does.

    Only what a preview would show is searched (prompts, replies, tool lines).
    """
    needle = text.casefold()
    # Plain words appear in a line's JSON exactly as typed (JSON escapes only
    # controls, quotes, backslashes and non-ASCII): lines without them are not decoded.
    quick = needle.encode() if _PLAIN.fullmatch(needle) else None
    convert = converter(source, prompts_in_items)
    with open_regular(path) as f:
        reader = BackwardLines(f, before)
        for offset, raw in reader:
            if raw is None or (quick is not None and quick not in raw.lower()):
                continue
            try:
                message = convert(loads(raw), offset, conversation_id)
            except (BadLine, ValueError, TypeError, KeyError, AttributeError, RecursionError):
                continue
            if message is not None and needle in message.content.casefold():
                return FoundLine(offset, offset + len(raw) + 1, reader.bytes_read)
    return None
