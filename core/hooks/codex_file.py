"""Codex's ``config.toml``: its one ``notify`` program, installed by delegate only when
free and changed only at its own statement.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

from core import ids
from core.errors import HookSettingsUnusable
from core.hooks import toml_spans
from core.hooks.commands import codex_notify, is_delegate_command
from core.hooks.files import unusable_result


def codex_config(path: Path, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise HookSettingsUnusable(
            f"{path} is not valid TOML ({exc}); fix it, then install again"
        ) from None


def _codex_notify_span(
    path: Path, text: str, config: dict[str, Any]
) -> toml_spans.Statement | None:
    """The top-level ``notify`` statement, found as TOML reads it and checked by tomllib."""
    try:
        found = [s for s in toml_spans.top_level(text) if s.key == ("notify",)]
    except (ValueError, IndexError) as exc:
        raise unusable_result(path, f"its top level could not be followed: {exc}") from None
    if "notify" not in config:
        if found:
            raise unusable_result(path, "a notify line was found where TOML sees none")
        return None
    if len(found) != 1:
        raise unusable_result(path, "its notify line could not be found")
    span = found[0]
    if codex_config(path, text[span.start : span.end]).get("notify") != config["notify"]:
        raise unusable_result(path, "its notify line could not be found")
    return span


def codex_installed(path: Path, text: str | None, data_dir: Path) -> str:
    config = codex_config(path, text)
    notify = config.get("notify")
    if notify is not None and not is_delegate_command(notify, ids.CODEX):
        raise HookSettingsUnusable(
            f"{path} already runs a notify program ({_shown(notify)}); Codex runs only"
            " one, so delegate's is not installed. Remove yours to install delegate's."
        )
    wanted = codex_notify(data_dir)
    if notify == wanted:
        return text or ""
    raw = text or ""
    newline = "\r\n" if "\r\n" in raw else "\n"
    line = "notify = " + json.dumps(wanted, ensure_ascii=False) + newline
    span = _codex_notify_span(path, raw, config)
    new_text = line + raw if span is None else raw[: span.start] + line + raw[span.end :]
    _check_codex(path, config, new_text, wanted)
    return new_text


def codex_removed(path: Path, text: str) -> str:
    config = codex_config(path, text)
    span = _codex_notify_span(path, text, config)
    if span is None:
        return text
    new_text = text[: span.start] + text[span.end :]
    _check_codex(path, config, new_text, None)
    return new_text


def _check_codex(path: Path, before: dict[str, Any], text: str, notify: object) -> None:
    try:
        after = codex_config(path, text)
    except HookSettingsUnusable as exc:
        raise unusable_result(path, str(exc)) from None
    rest_before = {k: v for k, v in before.items() if k != "notify"}
    rest_after = {k: v for k, v in after.items() if k != "notify"}
    if rest_after != rest_before or after.get("notify") != notify:
        raise unusable_result(path, "other settings would change")


def _shown(command: object) -> str:
    return shlex.join(command) if isinstance(command, list) else str(command)
