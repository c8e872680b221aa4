"""Small builders for synthetic transcript lines (real shapes, made-up content)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "11111111-2222-3333-4444-555555555555"


def envelope(kind: str, uuid: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/app",
        "sessionId": SESSION,
        "version": "2.1.42",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": ts,
        **extra,
    }


def user(
    uuid: str, text: str, ts: str = "2026-03-01T10:00:00.000Z", **extra: Any
) -> dict[str, Any]:
    return envelope("user", uuid, ts, message={"role": "user", "content": text}, **extra)


def assistant(
    uuid: str,
    text: str,
    msg_id: str,
    ts: str = "2026-03-01T10:00:01.000Z",
    usage: tuple[int, int, int, int] = (10, 100, 1000, 5),
) -> dict[str, Any]:
    inp, create, read, out = usage
    return envelope(
        "assistant",
        uuid,
        ts,
        message={
            "id": msg_id,
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": text}],
            "usage": {
                "input_tokens": inp,
                "cache_creation_input_tokens": create,
                "cache_read_input_tokens": read,
                "output_tokens": out,
            },
        },
    )


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line(o) for o in objs))
    return path


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)
