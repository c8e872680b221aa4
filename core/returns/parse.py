"""Judging a role's final message: the minimal return, or what delegate says instead.

A valid final message is ``{"status": ..., "summary": [three lines]}`` alone, or in
one fenced ``json`` block, within the token budget, with a status the role may
return. Anything else never reaches the primary: it gets ``INVALID_RETURN`` and
three lines delegate writes from what it found, the last saying where the full text
is. The message is agent output, so nothing here trusts it: the work is linear in
its length (a huge message is measured by samples and refused before any parsing),
nothing raises, and what is quoted back is one short printable line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

from core.returns.display import one_line
from core.returns.model import (
    INVALID_RETURN,
    ROLE_LABELS,
    ROLE_STATUSES,
    SUMMARY_LINES,
    AgentRole,
    CompactReturn,
    ParsedReturn,
    ReturnRule,
)
from core.tokens import measure_tokens

MAX_PARSE_CHARS: Final = 64 * 1024
"""A message longer than this is refused unparsed, whatever the budget (a minimal
return is a few hundred characters)."""
MAX_CANDIDATES: Final = 16
"""Braces tried as the start of an object in a verbose message (bounds the work)."""
MAX_LINE_CHARS: Final = 160
"""Each of the three lines delegate writes is cut here."""
FENCE: Final = "```"

_KEYS: Final = ("status", "summary")


class _Duplicate(ValueError):
    """An object names one key twice (JSON lets the last one win silently)."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(key)
        found[key] = value
    return found


_DECODER: Final = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def _decode(text: str) -> object:
    """``text`` as one JSON value; ``ValueError`` (or ``RecursionError``) when it is not."""
    value, end = _DECODER.raw_decode(text)
    if text[end:].strip():
        raise ValueError("extra data")
    return value


def _fenced(text: str) -> str | None:
    """The body of ``text`` when it is exactly one fenced block (```json ... ```)."""
    if not (text.startswith(FENCE) and text.endswith(FENCE)) or text.count(FENCE) != 2:
        return None
    newline = text.find("\n")
    if newline < 0:
        return None
    info = text[len(FENCE) : newline].strip().lower()
    if info not in ("", "json"):
        return None
    return text[newline + 1 : -len(FENCE)]


def _objects_in(text: str) -> list[dict[str, object]]:
    """The JSON objects starting at the first few braces of ``text`` (at most two)."""
    found: list[dict[str, object]] = []
    start, tries = text.find("{"), 0
    while start >= 0 and tries < MAX_CANDIDATES and len(found) < 2:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found


def _statuses(objects: list[dict[str, object]], role: AgentRole) -> str:
    """The role's statuses the objects carry, for the found line (the primary may act on
    one even though the return is refused); other values are not quoted."""
    said = [o["status"] for o in objects if o.get("status") in ROLE_STATUSES[role]]
    return f" (status {', '.join(map(str, said))})" if said else ""


def _json_problem(text: str) -> str:
    """Why ``text`` is not one JSON value, said briefly (position, not content)."""
    try:
        _decode(text)
    except _Duplicate as error:
        return f"the key {one_line(str(error), 40)!r} appears twice"
    except json.JSONDecodeError as error:
        return f"malformed JSON ({error.msg} at line {error.lineno} column {error.colno})"
    except RecursionError:
        return "malformed JSON (nested too deeply)"
    except ValueError:
        return "malformed JSON"
    return "malformed JSON"


def _lines_problem(summary: object) -> str | None:
    if not isinstance(summary, list):
        return f"summary is {_kind(summary)}, not a list of {SUMMARY_LINES} lines"
    if len(summary) != SUMMARY_LINES:
        return f"summary has {len(summary)} lines, not {SUMMARY_LINES}"
    for number, line in enumerate(summary, 1):
        if not isinstance(line, str):
            return f"summary line {number} is {_kind(line)}, not text"
        if not line.strip():
            return f"summary line {number} is empty"
        if line.splitlines() != [line]:
            return f"summary line {number} spans several lines"
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            return f"summary line {number} is not valid text"
    return None


def _kind(value: object) -> str:
    names: dict[type, str] = {
        dict: "an object",
        list: "a list",
        str: "text",
        bool: "true/false",
        int: "a number",
        float: "a number",
    }
    return "null" if value is None else names.get(type(value), "a value")


def _found_line(tokens: int, found: str) -> str:
    return one_line(f"Found: {found} ({tokens:,} tokens)", MAX_LINE_CHARS)


def rejected(
    rule: ReturnRule,
    reason: str,
    role: AgentRole,
    tokens: int,
    conversation_id: str | None,
    *,
    found: str = "",
) -> ParsedReturn:
    """An ``INVALID_RETURN`` for ``role``: the rule broken, what was found, where the full
    text is. For callers that find a problem after parsing (no hand-off file, no final
    message) as much as for the parser."""
    where = (
        f"Full text: delegate_sessions messages {one_line(conversation_id, 80)}"
        if conversation_id
        else "Full text: in the run's session (delegate_sessions messages <conversation id>)"
    )
    lines = (
        one_line(f"{ROLE_LABELS[role]} return rejected ({rule.value}): {reason}", MAX_LINE_CHARS),
        _found_line(tokens, found or "a final message that breaks the compact-return protocol"),
        where,
    )
    return ParsedReturn(
        answer=CompactReturn(INVALID_RETURN, lines),
        tokens=tokens,
        rule=rule,
        reason=one_line(reason, 2 * MAX_LINE_CHARS),
    )


def parse_return(
    text: str, role: AgentRole, *, max_tokens: int, conversation_id: str | None = None
) -> ParsedReturn:
    """Judge ``text``, ``role``'s final message: its own return when valid, else an
    ``INVALID_RETURN`` naming the rule it broke. Never raises."""
    tokens = measure_tokens(text).value if isinstance(text, str) else 0

    def bad(rule: ReturnRule, reason: str, found: str) -> ParsedReturn:
        return rejected(rule, reason, role, tokens, conversation_id, found=found)

    if not isinstance(text, str) or not text.strip():
        return bad(ReturnRule.EMPTY, "the final message is empty", "no text")
    if tokens > max_tokens:
        return bad(
            ReturnRule.TOO_LONG,
            f"{tokens:,} tokens, over the {max_tokens:,}-token budget of a return",
            "a long final message, not passed on",
        )
    if len(text) > MAX_PARSE_CHARS:
        return bad(
            ReturnRule.TOO_LONG,
            f"{len(text):,} characters, over the {MAX_PARSE_CHARS:,} a return may have",
            "a long final message, not passed on",
        )
    # a byte-order mark is an editor's, not the agent's: it is not text around the JSON
    judged = _judge(text.strip().lstrip("\ufeff").strip(), role, bad)
    return ParsedReturn(judged, tokens) if isinstance(judged, CompactReturn) else judged


_Bad = Callable[[ReturnRule, str, str], ParsedReturn]


def _judge(text: str, role: AgentRole, bad: _Bad) -> CompactReturn | ParsedReturn:
    body = _fenced(text)
    candidate = body.strip() if body is not None else text
    try:
        value = _decode(candidate)
    except (ValueError, RecursionError):
        problem = _json_problem(candidate) if "{" in text else "no JSON object in the message"
        objects = _objects_in(text)
        if len(objects) >= 2:
            return bad(
                ReturnRule.TWO_OBJECTS,
                "more than one JSON object; answer with one",
                f"two or more JSON objects{_statuses(objects, role)}",
            )
        if objects:
            return bad(
                ReturnRule.VERBOSE,
                "text around the JSON; answer only the JSON (or one ```json block)",
                f"one JSON object{_statuses(objects, role)} with text around it",
            )
        if problem.startswith("the key"):
            return bad(ReturnRule.SHAPE, problem, "an object with a repeated key")
        return bad(ReturnRule.NOT_JSON, problem, "no JSON object")
    return _shape(value, role, bad)


def _shape(value: object, role: AgentRole, bad: _Bad) -> CompactReturn | ParsedReturn:
    if not isinstance(value, dict):
        return bad(ReturnRule.SHAPE, f"the JSON is {_kind(value)}, not an object", _kind(value))
    extra = [key for key in value if key not in _KEYS]
    missing = [key for key in _KEYS if key not in value]
    if extra or missing:
        said = []
        if missing:
            said.append("missing " + ", ".join(missing))
        if extra:
            names = ", ".join(one_line(key, 30) for key in extra[:4])
            said.append(f"extra keys {names}{' …' if len(extra) > 4 else ''}")
        return bad(
            ReturnRule.SHAPE,
            "; ".join(said) + " (only status and summary)",
            f"an object with keys {', '.join(one_line(k, 30) for k in list(value)[:6])}",
        )
    status = value["status"]
    allowed = ROLE_STATUSES[role]
    if not isinstance(status, str) or status not in allowed:
        shown = one_line(status, 40) if isinstance(status, str) else _kind(status)
        return bad(
            ReturnRule.STATUS,
            f"{shown!r} is not a {role.value} status (one of {', '.join(allowed)})",
            f"status {shown!r}",
        )
    problem = _lines_problem(value["summary"])
    if problem is not None:
        return bad(ReturnRule.SUMMARY_LINES, problem, f"status {status}, {problem}")
    summary = value["summary"]
    return CompactReturn(status, (summary[0], summary[1], summary[2]))
