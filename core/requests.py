"""Checking what callers send: requests validated by their models, ids fit to store or print.

Owns the wording of ``invalid_request`` for a malformed request and the rules for
text that SQLite can bind.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.errors import InvalidRequest

M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any) -> M:
    """Validate ``data`` or raise ``invalid_request`` naming each bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "request"
            problems.append(f"{where}: {err['msg']}")
        raise InvalidRequest("; ".join(problems)) from exc


def storable(text: str) -> bool:
    """Text SQLite can bind: argv may carry lone surrogates from undecodable bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def printable(value: object) -> str:
    """``value`` as text that prints anywhere (undecodable bytes escaped)."""
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")
