"""Opaque pagination cursors: base64url of a small versioned JSON payload.

Cursors are keyset positions (never offsets), so a page stays correct while
other sessions are touched between calls.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass
from typing import TypeGuard

from core.errors import InvalidCursor
from core.models import SessionSort

_VERSION = 1
# SQLite integers are signed 64-bit; a forged cursor beyond that must not reach a query.
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class SessionCursor:
    """Position after the last session of a page: ``(sort key, conversation_id)``.

    The sort key is the last interaction's time, or the creation time when
    ``sort`` is ``created``; a cursor only continues a listing of its own sort.
    """

    last_interacted_us: int
    conversation_id: str
    sort: SessionSort = SessionSort.ACTIVITY


@dataclass(frozen=True, slots=True)
class MessageCursor:
    """Position after the oldest message of a page within one conversation."""

    conversation_id: str
    seq: int


def _encode(payload: dict[str, object]) -> str:
    raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decode(cursor: str, kind: str) -> dict[str, object]:
    problem = f"cursor {cursor[:40]!r} is not one this server issued; start again without a cursor"
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error, RecursionError) as exc:
        raise InvalidCursor(problem) from exc
    if not isinstance(payload, dict) or payload.get("v") != _VERSION or payload.get("k") != kind:
        raise InvalidCursor(problem)
    return payload


def _is_sql_int(value: object) -> TypeGuard[int]:
    return type(value) is int and _INT_MIN <= value <= _INT_MAX


def encode_session_cursor(cursor: SessionCursor) -> str:
    payload: dict[str, object] = {
        "v": _VERSION,
        "k": "s",
        "t": cursor.last_interacted_us,
        "id": cursor.conversation_id,
    }
    if cursor.sort is not SessionSort.ACTIVITY:  # activity cursors stay as they were
        payload["o"] = cursor.sort.value
    return _encode(payload)


def decode_session_cursor(cursor: str, sort: SessionSort = SessionSort.ACTIVITY) -> SessionCursor:
    """The position ``cursor`` names; :class:`InvalidCursor` unless it pages ``sort``."""
    payload = _decode(cursor, "s")
    ts, cid = payload.get("t"), payload.get("id")
    if not _is_sql_int(ts) or not isinstance(cid, str):
        raise InvalidCursor(f"cursor {cursor[:40]!r} is malformed; start again without a cursor")
    if payload.get("o", SessionSort.ACTIVITY.value) != sort.value:
        raise InvalidCursor("cursor belongs to a listing in another order; start again without it")
    return SessionCursor(ts, cid, sort)


def encode_message_cursor(cursor: MessageCursor) -> str:
    return _encode({"v": _VERSION, "k": "m", "c": cursor.conversation_id, "s": cursor.seq})


def decode_message_cursor(cursor: str, conversation_id: str) -> MessageCursor:
    payload = _decode(cursor, "m")
    cid, seq = payload.get("c"), payload.get("s")
    if not isinstance(cid, str) or not _is_sql_int(seq):
        raise InvalidCursor(f"cursor {cursor[:40]!r} is malformed; start again without a cursor")
    if cid != conversation_id:
        raise InvalidCursor(f"cursor belongs to conversation {cid!r}, not {conversation_id!r}")
    return MessageCursor(cid, seq)


@dataclass(frozen=True, slots=True)
class TranscriptCursor:
    """Position in an imported transcript: the byte offset of the oldest line shown.

    The next page reads the file backwards from there (see core.sources.preview).
    """

    conversation_id: str
    offset: int


def encode_transcript_cursor(cursor: TranscriptCursor) -> str:
    return _encode({"v": _VERSION, "k": "t", "c": cursor.conversation_id, "o": cursor.offset})


def decode_transcript_cursor(cursor: str, conversation_id: str) -> TranscriptCursor:
    payload = _decode(cursor, "t")
    cid, offset = payload.get("c"), payload.get("o")
    if not isinstance(cid, str) or not _is_sql_int(offset) or offset < 0:
        raise InvalidCursor(f"cursor {cursor[:40]!r} is malformed; start again without a cursor")
    if cid != conversation_id:
        raise InvalidCursor(f"cursor belongs to conversation {cid!r}, not {conversation_id!r}")
    return TranscriptCursor(cid, offset)


@dataclass(frozen=True, slots=True)
class SearchCursor:
    """Position after the last result of a search page, for the query ``query_key`` names.

    Results are ordered by ``(score, -last_interacted_us, -conversation_id)``.
    """

    query_key: str
    score: float
    last_interacted_us: int
    conversation_id: str


def encode_search_cursor(cursor: SearchCursor) -> str:
    return _encode(
        {
            "v": _VERSION,
            "k": "q",
            "q": cursor.query_key,
            "r": cursor.score,
            "t": cursor.last_interacted_us,
            "id": cursor.conversation_id,
        }
    )


def decode_search_cursor(cursor: str, query_key: str) -> SearchCursor:
    payload = _decode(cursor, "q")
    key, score, ts, cid = payload.get("q"), payload.get("r"), payload.get("t"), payload.get("id")
    if isinstance(score, int) and _is_sql_int(score):
        score = float(score)
    if (
        not isinstance(key, str)
        or not isinstance(score, float)
        or not math.isfinite(score)
        or not _is_sql_int(ts)
        or not isinstance(cid, str)
    ):
        raise InvalidCursor(f"cursor {cursor[:40]!r} is malformed; start again without a cursor")
    if key != query_key:
        raise InvalidCursor("cursor belongs to another search; start again without a cursor")
    return SearchCursor(key, score, ts, cid)
