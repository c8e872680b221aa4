"""Claude Code's ``settings.json``: read strictly, delegate's entries found in it, added
and taken out at their own spans (every other byte stays).

An edit is checked before it is written: the result must mean to Claude Code what
the file meant, delegate's entries aside (:func:`claude_meaning`).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from core import ids
from core.errors import HookSettingsUnusable
from core.hooks import json_spans
from core.hooks.commands import CLAUDE_EVENTS, claude_hooks, hook_argv
from core.hooks.files import read_settings_text, unusable_result

BOM = "\ufeff"


def missing_for(path: Path, data_dir: Path) -> list[str]:
    """delegate's Claude Code hook events that ``path`` (Claude Code's settings) does
    not already run on ``data_dir`` (all of them when it cannot be read)."""
    try:
        settings = claude_settings(path, read_settings_text(path))
    except HookSettingsUnusable:
        return list(CLAUDE_EVENTS)
    hooks = settings.get("hooks", {})
    return [
        event
        for event in CLAUDE_EVENTS
        if not any(
            claude_group_is_ours(group, data_dir=str(data_dir), event=event)
            for group in hooks.get(event, [])
        )
    ]


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON (Claude Code cannot read it)")


def _parse_int(digits: str) -> object:
    return int(digits) if len(digits) < 1000 else Decimal(digits)


def _strict_json(text: str) -> object:
    """``text`` read as Claude Code reads it: strict JSON after an optional BOM.
    Numbers stay exact (``1e400`` is a Decimal, never infinity)."""
    return json.loads(
        text.removeprefix(BOM),
        parse_constant=_refuse_constant,
        parse_float=Decimal,
        parse_int=_parse_int,
    )


def claude_settings(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.removeprefix(BOM).strip():
        return {}
    try:
        settings = _strict_json(text)
    except (ValueError, RecursionError) as exc:
        raise HookSettingsUnusable(
            f"{path} is not valid JSON ({exc}); fix it, then install again"
        ) from None
    if not isinstance(settings, dict):
        raise HookSettingsUnusable(f"{path} does not hold a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise HookSettingsUnusable(f"{path}: 'hooks' must map event names to lists of hook groups")
    return settings


def claude_entry_is_ours(entry: object, data_dir: str | None = None, event: str = "") -> bool:
    if not isinstance(entry, dict) or entry.get("type") != "command":
        return False
    words = hook_argv(entry.get("command"), ids.CLAUDE_CODE)
    if words is None:
        return False
    return (data_dir is None or words[5] == data_dir) and (not event or words[8] == event)


def claude_group_is_ours(group: object, data_dir: str | None = None, event: str = "") -> bool:
    """A group as delegate writes it: only ``hooks``, every entry delegate's."""
    if not isinstance(group, dict) or set(group) != {"hooks"}:
        return False
    entries = group["hooks"]
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(claude_entry_is_ours(e, data_dir, event) for e in entries)
    )


def claude_ours(settings: dict[str, Any]) -> set[str]:
    """The events holding one of delegate's entries."""
    hooks = settings.get("hooks", {})
    return {
        event
        for event, groups in hooks.items()
        if any(
            isinstance(group, dict)
            and isinstance(group.get("hooks"), list)
            and any(claude_entry_is_ours(e) for e in group["hooks"])
            for group in groups
        )
    }


def claude_meaning(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as Claude Code acts on them, delegate's entries and the empty
    containers only they filled left out (to check an edit changed nothing else)."""
    meaning = dict(settings)
    hooks = meaning.get("hooks")
    if isinstance(hooks, dict):
        kept_hooks = {}
        for event, groups in hooks.items():
            kept = []
            for group in groups:
                if claude_group_is_ours(group):
                    continue
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    entries = [e for e in group["hooks"] if not claude_entry_is_ours(e)]
                    group = {**group, "hooks": entries}
                kept.append(group)
            if kept:
                kept_hooks[event] = kept
        if kept_hooks:
            meaning["hooks"] = kept_hooks
        else:
            meaning.pop("hooks")
    return meaning


def _decoded(text: str, item: json_spans.Item) -> object:
    return _strict_json(text[item.value_start : item.end])


def _member(key: str, value: object) -> json_spans.Render:
    def render(indent: str | None, unit: str, newline: str) -> str:
        laid = json_spans.render_value(value, indent, unit, newline)
        return f"{json.dumps(key, ensure_ascii=False)}: {laid}"

    return render


def _element(value: object) -> json_spans.Render:
    def render(indent: str | None, unit: str, newline: str) -> str:
        return json_spans.render_value(value, indent, unit, newline)

    return render


def claude_installed(path: Path, text: str | None, data_dir: Path) -> str:
    settings = claude_settings(path, text)
    wanted = claude_hooks(data_dir)
    if _claude_has_exactly(settings, wanted):
        return text or ""  # already in, exactly
    raw = text or ""
    bom = BOM if raw.startswith(BOM) else ""
    try:
        body = _claude_body_without_ours(raw.removeprefix(BOM))
        body = _claude_body_with(body if body.strip() else "{}\n", wanted)
    except (ValueError, IndexError, KeyError) as exc:
        raise unusable_result(path, str(exc)) from None
    new_text = bom + body
    _check_claude(path, settings, new_text, installed=True)
    return new_text


def claude_removed(path: Path, text: str) -> str:
    settings = claude_settings(path, text)
    bom = BOM if text.startswith(BOM) else ""
    try:
        new_text = bom + _claude_body_without_ours(text.removeprefix(BOM))
    except (ValueError, IndexError, KeyError) as exc:
        raise unusable_result(path, str(exc)) from None
    _check_claude(path, settings, new_text, installed=False)
    return new_text


def _check_claude(path: Path, before: dict[str, Any], text: str, *, installed: bool) -> None:
    """The edit's result is read by Claude Code as ``before`` plus (or minus) delegate's hooks."""
    try:
        after = claude_settings(path, text)
    except HookSettingsUnusable as exc:
        raise unusable_result(path, str(exc)) from None
    if claude_meaning(after) != claude_meaning(before):
        raise unusable_result(path, "other settings would change")
    ours = claude_ours(after)
    if ours != (set(CLAUDE_EVENTS) if installed else set()):
        raise unusable_result(path, "delegate's hooks would not be read as written")


def _claude_has_exactly(settings: dict[str, Any], wanted: dict[str, list[Any]]) -> bool:
    """Whether delegate's entries in ``settings`` are ``wanted`` and nothing else."""
    hooks = settings.get("hooks", {})
    for event, groups in hooks.items():
        ours = [g for g in groups if claude_group_is_ours(g)]
        if ours != wanted.get(event, []):
            return False
        others = [g for g in groups if not claude_group_is_ours(g)]
        if claude_ours({"hooks": {event: others}}):
            return False  # an entry of delegate's inside a group of yours
    return all(event in hooks for event in wanted)


def _claude_body_with(body: str, wanted: dict[str, list[dict[str, Any]]]) -> str:
    """``body`` (one JSON object) with delegate's groups appended, span by span."""
    top = json_spans.root(body)
    if top is None or body[top.open] != "{":
        raise ValueError("the top level is not an object")
    hooks_item = top.last("hooks")
    if hooks_item is None:
        return json_spans.append(body, top, _member("hooks", wanted))
    for event in CLAUDE_EVENTS:
        top = json_spans.root(body)
        assert top is not None
        hooks_item = top.last("hooks")
        assert hooks_item is not None
        hooks_box = json_spans.container(body, hooks_item.value_start)
        event_item = hooks_box.last(event)
        if event_item is None:
            body = json_spans.append(body, hooks_box, _member(event, wanted[event]))
        else:
            groups = json_spans.container(body, event_item.value_start)
            body = json_spans.append(body, groups, _element(wanted[event][0]))
    return body


def _claude_body_without_ours(body: str) -> str:
    """``body`` without delegate's entries: the largest unit delegate could have added
    (the whole ``hooks``, an event, a group, an entry) goes, one span at a time."""
    while True:
        edited = _remove_one_of_ours(body)
        if edited is None:
            return body
        body = edited


def _remove_one_of_ours(body: str) -> str | None:
    top = json_spans.root(body)
    if top is None or body[top.open] != "{":
        return None
    for hooks_index in reversed(range(len(top.items))):
        hooks_item = top.items[hooks_index]
        if hooks_item.key != "hooks" or body[hooks_item.value_start] != "{":
            continue
        hooks_box = json_spans.container(body, hooks_item.value_start)
        events = [_decoded(body, item) for item in hooks_box.items]
        if events and all(_only_ours(groups) for groups in events):
            return json_spans.remove(body, top, hooks_index)
        for index in reversed(range(len(events))):
            if _only_ours(events[index]):
                return json_spans.remove(body, hooks_box, index)
        for event_item, groups in zip(hooks_box.items, events, strict=True):
            if not isinstance(groups, list):
                continue
            groups_box = json_spans.container(body, event_item.value_start)
            for index in reversed(range(len(groups))):
                if claude_group_is_ours(groups[index]):
                    return json_spans.remove(body, groups_box, index)
            for group_item, group in zip(groups_box.items, groups, strict=True):
                entries = group.get("hooks") if isinstance(group, dict) else None
                if not isinstance(entries, list):
                    continue
                group_box = json_spans.container(body, group_item.value_start)
                entries_item = group_box.last("hooks")
                assert entries_item is not None
                entries_box = json_spans.container(body, entries_item.value_start)
                for index in reversed(range(len(entries))):
                    if claude_entry_is_ours(entries[index]):
                        return json_spans.remove(body, entries_box, index)
    return None


def _only_ours(groups: object) -> bool:
    return (
        isinstance(groups, list)
        and bool(groups)
        and all(claude_group_is_ours(group) for group in groups)
    )
