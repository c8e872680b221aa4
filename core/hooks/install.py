"""Installing delegate's hooks into an agent CLI's settings, and taking them out again.

Claude Code reads hooks from ``settings.json`` in its folder (``$CLAUDE_CONFIG_DIR``,
else ``~/.claude``): ``{"hooks": {EVENT: [{"hooks": [{"type": "command", ...}]}]}}``.
delegate adds one group of its own per event, after the person's own groups,
and touches nothing else. Codex reads ``notify`` (a program run after every
turn) from ``config.toml`` in ``$CODEX_HOME`` (else ``~/.codex``); it holds
one program, so delegate installs there only when it is free.

The files are parsed to find what is there, and changed only at the spans of
delegate's own entries (:mod:`core.hooks.json_spans`, :mod:`core.hooks.toml_spans`):
every other byte (numbers like ``1e400``, key order, layout, a BOM, CRLF) stays.
delegate's entries are recognised by a marker only delegate writes
(``DELEGATE_HOOK=1`` before the command), or by the exact command line an older
delegate wrote; a person's own hook that merely runs delegate is never taken.
Every edit goes through :func:`core.hooks.files.edit_settings` (locked, checked
again before the swap, so a concurrent editor loses nothing), and a result the
agent CLI could not parse (strict JSON, TOML) is refused, never written.

The file's text before the first change and the text delegate wrote are kept in
the data folder; ``uninstall`` on a file nobody touched since writes the first
back byte for byte (or removes a file delegate created). A person's later edits
are kept: then only delegate's entries go, span by span.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path, PurePath
from typing import Any

from core import ids
from core.errors import HookSettingsUnusable, InvalidRequest
from core.hooks import json_spans, toml_spans
from core.hooks.files import (
    edit_settings,
    read_settings_text,
    remove_settings_file,
    write_settings_text,
)

CLAUDE_EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop")
"""The Claude Code hook events delegate handles (see docs/hooks.md)."""
CODEX_EVENTS: tuple[str, ...] = ("notify",)
"""Codex's one turn-complete program."""
AGENT_EVENTS: dict[str, tuple[str, ...]] = {ids.CLAUDE_CODE: CLAUDE_EVENTS, ids.CODEX: CODEX_EVENTS}
HOOK_TIMEOUT_S = 60
"""How long Claude Code lets one of delegate's hooks run (an import and a few writes)."""
BACKUP_FOLDER = "hooks"
"""Where in the data folder the settings as they were before ``install`` are kept."""
MARKER = "DELEGATE_HOOK=1"
"""What only delegate writes into its hook commands (an environment variable, so the
command runs the same): how ``uninstall`` knows an entry is delegate's."""

_BOM = "\ufeff"
_PYTHON = re.compile(r"python[0-9.]*")


def hook_command(data_dir: Path, agent: str, event: str) -> list[str]:
    """The program an agent runs for ``event``: this delegate, on this data folder.

    The interpreter running now, with ``-P`` so a project's own ``tui`` folder
    (the hook runs in the project) can never stand in for delegate's.
    """
    return [
        sys.executable,
        "-P",
        "-m",
        "tui.cli",
        "--data-dir",
        str(data_dir),
        "hook",
        agent,
        event,
    ]


def claude_command(data_dir: Path, event: str) -> str:
    """The shell line of delegate's Claude Code hook for ``event``, marker first."""
    return f"{MARKER} {shlex.join(hook_command(data_dir, ids.CLAUDE_CODE, event))}"


def codex_notify(data_dir: Path) -> list[str]:
    """Codex's ``notify`` argv (run without a shell: ``env`` sets the marker)."""
    return ["env", MARKER, *hook_command(data_dir, ids.CODEX, "notify")]


def claude_hooks(data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """delegate's Claude Code hooks for ``data_dir``: one group per event, in the
    shape of ``settings.json``'s ``hooks`` (also given to a CLI delegate opens, as
    ``--settings``)."""
    return {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": claude_command(data_dir, event),
                        "timeout": HOOK_TIMEOUT_S,
                    }
                ]
            }
        ]
        for event in CLAUDE_EVENTS
    }


def missing_for(path: Path, data_dir: Path) -> list[str]:
    """delegate's Claude Code hook events that ``path`` (Claude Code's settings) does
    not already run on ``data_dir`` (all of them when it cannot be read)."""
    try:
        settings = _claude_settings(path, read_settings_text(path))
    except HookSettingsUnusable:
        return list(CLAUDE_EVENTS)
    hooks = settings.get("hooks", {})
    return [
        event
        for event in CLAUDE_EVENTS
        if not any(
            _claude_group_is_ours(group, data_dir=str(data_dir), event=event)
            for group in hooks.get(event, [])
        )
    ]


def is_delegate_command(command: object, agent: str) -> bool:
    """Whether a hook command (a shell line or an argv) is one delegate installed:
    marked as delegate's, or exactly the line an older delegate wrote."""
    return _hook_argv(command, agent) is not None


def _hook_argv(command: object, agent: str) -> list[str] | None:
    """The delegate command line in ``command`` (without the marker), if it is delegate's."""
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if words[:1] == [MARKER]:
            exact = command == f"{MARKER} {shlex.join(words[1:])}"
            words = words[1:]
        else:  # as an older delegate wrote it
            exact = command == shlex.join(words)
        return words if exact and _is_hook_argv(words, agent) else None
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        words = command[2:] if command[:2] == ["env", MARKER] else command
        return list(words) if _is_hook_argv(words, agent) else None
    return None


def _is_hook_argv(words: list[str], agent: str) -> bool:
    return (
        len(words) == 9
        and _PYTHON.fullmatch(PurePath(words[0]).name) is not None
        and words[1:5] == ["-P", "-m", "tui.cli", "--data-dir"]
        and bool(words[5])
        and words[6:8] == ["hook", agent]
        and words[8] in AGENT_EVENTS[agent]
    )


@dataclass
class HooksStatus:
    """Where an agent's hooks live and which of delegate's are in them."""

    agent: str
    settings: str
    events: list[str] = field(default_factory=list)  # delegate's, installed
    missing: list[str] = field(default_factory=list)  # delegate's, not installed
    changed: bool = False  # this call wrote the file
    note: str = ""

    @property
    def installed(self) -> bool:
        return bool(self.events) and not self.missing

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "settings": self.settings,
            "installed": self.installed,
            "events": self.events,
            "missing": self.missing,
            "changed": self.changed,
            "note": self.note,
        }


def settings_path(agent: str, root: Path | None = None) -> Path:
    """The file an agent reads its hooks from (``root``: its folder, else the usual)."""
    from core.sources.files import claude_root, codex_root

    if agent == ids.CLAUDE_CODE:
        return claude_root(root) / "settings.json"
    if agent == ids.CODEX:
        return codex_root(root) / "config.toml"
    raise InvalidRequest(f"hooks are for claude-code or codex, not {agent!r}")


def install(agent: str, path: Path, data_dir: Path) -> HooksStatus:
    """Add delegate's hooks for ``agent`` to ``path`` (again: replaces delegate's own)."""
    if agent not in AGENT_EVENTS:
        raise InvalidRequest(f"hooks are for claude-code or codex, not {agent!r}")

    def compute(text: str | None) -> str | None:
        if agent == ids.CLAUDE_CODE:
            return _claude_installed(path, text, data_dir)
        return _codex_installed(path, text, data_dir)

    backup = _backup_path(data_dir, agent, path)
    before, after = edit_settings(path, compute, _lock_path(data_dir, agent, path))
    changed = after != before
    if changed:
        original = _read_backup(backup)
        if not _has_ours(agent, before):
            _keep_original(backup, path, before, after)
        elif original is not None and original.installed == before:
            _keep_original(backup, path, original.text, after)
        else:
            _drop_backup(backup)  # the file changed since: its first text is no longer the base
    status = status_of(agent, path)
    status.changed = changed
    return status


def uninstall(agent: str, path: Path, data_dir: Path) -> HooksStatus:
    """Take delegate's hooks out of ``path``; what was there before comes back exactly."""
    if agent not in AGENT_EVENTS:
        raise InvalidRequest(f"hooks are for claude-code or codex, not {agent!r}")
    backup = _backup_path(data_dir, agent, path)
    original = _read_backup(backup)
    restored = False

    def compute(text: str | None) -> str | None:
        nonlocal restored
        restored = False
        if text is None or not _has_ours(agent, text, path):
            return text
        if original is not None and original.matches(agent, text):
            restored = True
            return original.text
        if agent == ids.CLAUDE_CODE:
            return _claude_removed(path, text)
        return _codex_removed(path, text)

    before, after = edit_settings(path, compute, _lock_path(data_dir, agent, path))
    _drop_backup(backup)
    if after == before:
        return status_of(agent, path)
    status = status_of(agent, path)
    status.changed = True
    status.note = (
        "restored as it was before install"
        if restored
        else "delegate's hooks removed; later edits kept"
    )
    return status


def status_of(agent: str, path: Path) -> HooksStatus:
    """Which of delegate's hooks ``path`` holds."""
    text = read_settings_text(path)
    if agent == ids.CLAUDE_CODE:
        found = _claude_ours(_claude_settings(path, text))
    else:
        config = _codex_config(path, text)
        found = {"notify"} if is_delegate_command(config.get("notify"), agent) else set()
    events = AGENT_EVENTS[agent]
    return HooksStatus(
        agent,
        str(path),
        events=[e for e in events if e in found],
        missing=[e for e in events if e not in found],
    )


def _has_ours(agent: str, text: str | None, path: Path | None = None) -> bool:
    where = path or Path("settings")
    if agent == ids.CLAUDE_CODE:
        return bool(_claude_ours(_claude_settings(where, text)))
    return is_delegate_command(_codex_config(where, text).get("notify"), agent)


def _unusable_result(path: Path, why: str) -> HookSettingsUnusable:
    return HookSettingsUnusable(
        f"delegate's change to {path} would leave a file the agent cannot read as meant"
        f" ({why}); it was left as it was. Please report this with the file's shape."
    )


# --- Claude Code settings.json -------------------------------------------------


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON (Claude Code cannot read it)")


def _parse_int(digits: str) -> object:
    return int(digits) if len(digits) < 1000 else Decimal(digits)


def _strict_json(text: str) -> object:
    """``text`` read as Claude Code reads it: strict JSON after an optional BOM.
    Numbers stay exact (``1e400`` is a Decimal, never infinity)."""
    return json.loads(
        text.removeprefix(_BOM),
        parse_constant=_refuse_constant,
        parse_float=Decimal,
        parse_int=_parse_int,
    )


def _claude_settings(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.removeprefix(_BOM).strip():
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


def _claude_entry_is_ours(entry: object, data_dir: str | None = None, event: str = "") -> bool:
    if not isinstance(entry, dict) or entry.get("type") != "command":
        return False
    words = _hook_argv(entry.get("command"), ids.CLAUDE_CODE)
    if words is None:
        return False
    return (data_dir is None or words[5] == data_dir) and (not event or words[8] == event)


def _claude_group_is_ours(group: object, data_dir: str | None = None, event: str = "") -> bool:
    """A group as delegate writes it: only ``hooks``, every entry delegate's."""
    if not isinstance(group, dict) or set(group) != {"hooks"}:
        return False
    entries = group["hooks"]
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(_claude_entry_is_ours(e, data_dir, event) for e in entries)
    )


def _claude_ours(settings: dict[str, Any]) -> set[str]:
    """The events holding one of delegate's entries."""
    hooks = settings.get("hooks", {})
    return {
        event
        for event, groups in hooks.items()
        if any(
            isinstance(group, dict)
            and isinstance(group.get("hooks"), list)
            and any(_claude_entry_is_ours(e) for e in group["hooks"])
            for group in groups
        )
    }


def _claude_meaning(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as Claude Code acts on them, delegate's entries and the empty
    containers only they filled left out (to check an edit changed nothing else)."""
    meaning = dict(settings)
    hooks = meaning.get("hooks")
    if isinstance(hooks, dict):
        kept_hooks = {}
        for event, groups in hooks.items():
            kept = []
            for group in groups:
                if _claude_group_is_ours(group):
                    continue
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    entries = [e for e in group["hooks"] if not _claude_entry_is_ours(e)]
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


def _claude_installed(path: Path, text: str | None, data_dir: Path) -> str:
    settings = _claude_settings(path, text)
    wanted = claude_hooks(data_dir)
    if _claude_has_exactly(settings, wanted):
        return text or ""  # already in, exactly
    raw = text or ""
    bom = _BOM if raw.startswith(_BOM) else ""
    try:
        body = _claude_body_without_ours(raw.removeprefix(_BOM))
        body = _claude_body_with(body if body.strip() else "{}\n", wanted)
    except (ValueError, IndexError, KeyError) as exc:
        raise _unusable_result(path, str(exc)) from None
    new_text = bom + body
    _check_claude(path, settings, new_text, installed=True)
    return new_text


def _claude_removed(path: Path, text: str) -> str:
    settings = _claude_settings(path, text)
    bom = _BOM if text.startswith(_BOM) else ""
    try:
        new_text = bom + _claude_body_without_ours(text.removeprefix(_BOM))
    except (ValueError, IndexError, KeyError) as exc:
        raise _unusable_result(path, str(exc)) from None
    _check_claude(path, settings, new_text, installed=False)
    return new_text


def _check_claude(path: Path, before: dict[str, Any], text: str, *, installed: bool) -> None:
    """The edit's result is read by Claude Code as ``before`` plus (or minus) delegate's hooks."""
    try:
        after = _claude_settings(path, text)
    except HookSettingsUnusable as exc:
        raise _unusable_result(path, str(exc)) from None
    if _claude_meaning(after) != _claude_meaning(before):
        raise _unusable_result(path, "other settings would change")
    ours = _claude_ours(after)
    if ours != (set(CLAUDE_EVENTS) if installed else set()):
        raise _unusable_result(path, "delegate's hooks would not be read as written")


def _claude_has_exactly(settings: dict[str, Any], wanted: dict[str, list[Any]]) -> bool:
    """Whether delegate's entries in ``settings`` are ``wanted`` and nothing else."""
    hooks = settings.get("hooks", {})
    for event, groups in hooks.items():
        ours = [g for g in groups if _claude_group_is_ours(g)]
        if ours != wanted.get(event, []):
            return False
        others = [g for g in groups if not _claude_group_is_ours(g)]
        if _claude_ours({"hooks": {event: others}}):
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
                if _claude_group_is_ours(groups[index]):
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
                    if _claude_entry_is_ours(entries[index]):
                        return json_spans.remove(body, entries_box, index)
    return None


def _only_ours(groups: object) -> bool:
    return (
        isinstance(groups, list)
        and bool(groups)
        and all(_claude_group_is_ours(group) for group in groups)
    )


# --- Codex config.toml -------------------------------------------------------


def _codex_config(path: Path, text: str | None) -> dict[str, Any]:
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
        raise _unusable_result(path, f"its top level could not be followed: {exc}") from None
    if "notify" not in config:
        if found:
            raise _unusable_result(path, "a notify line was found where TOML sees none")
        return None
    if len(found) != 1:
        raise _unusable_result(path, "its notify line could not be found")
    span = found[0]
    if _codex_config(path, text[span.start : span.end]).get("notify") != config["notify"]:
        raise _unusable_result(path, "its notify line could not be found")
    return span


def _codex_installed(path: Path, text: str | None, data_dir: Path) -> str:
    config = _codex_config(path, text)
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


def _codex_removed(path: Path, text: str) -> str:
    config = _codex_config(path, text)
    span = _codex_notify_span(path, text, config)
    if span is None:
        return text
    new_text = text[: span.start] + text[span.end :]
    _check_codex(path, config, new_text, None)
    return new_text


def _check_codex(path: Path, before: dict[str, Any], text: str, notify: object) -> None:
    try:
        after = _codex_config(path, text)
    except HookSettingsUnusable as exc:
        raise _unusable_result(path, str(exc)) from None
    rest_before = {k: v for k, v in before.items() if k != "notify"}
    rest_after = {k: v for k, v in after.items() if k != "notify"}
    if rest_after != rest_before or after.get("notify") != notify:
        raise _unusable_result(path, "other settings would change")


def _shown(command: object) -> str:
    return shlex.join(command) if isinstance(command, list) else str(command)


# --- the settings as they were -------------------------------------------------


@dataclass(frozen=True)
class _Original:
    text: str | None  # None: there was no file
    installed: str | None  # what delegate wrote (None: not known, an older backup)

    def matches(self, agent: str, current: str) -> bool:
        """Whether ``current`` is what delegate left: then ``text`` is put back as is."""
        if self.installed is not None:
            return current == self.installed
        if agent == ids.CLAUDE_CODE:  # an older delegate's backup: compare meanings
            try:
                was = _claude_settings(Path("settings"), self.text)
                now = _claude_settings(Path("settings"), current)
            except HookSettingsUnusable:
                return False
            return _claude_meaning(was) == _claude_meaning(now)
        try:
            was_toml = _codex_config(Path("config"), self.text)
            now_toml = _codex_config(Path("config"), current)
        except HookSettingsUnusable:
            return False
        now_toml.pop("notify", None)
        return was_toml == now_toml


def _backup_path(data_dir: Path, agent: str, path: Path) -> Path:
    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return data_dir / BACKUP_FOLDER / f"{agent}-{digest}.json"


def _lock_path(data_dir: Path, agent: str, path: Path) -> Path:
    return _backup_path(data_dir, agent, path).with_suffix(".lock")


def _keep_original(backup: Path, path: Path, text: str | None, installed: str | None) -> None:
    payload = {
        "settings": str(path.absolute()),
        "existed": text is not None,
        "text": text,
        "installed": installed,
    }
    write_settings_text(backup, json.dumps(payload, ensure_ascii=False) + "\n")


def _read_backup(backup: Path) -> _Original | None:
    try:
        text = read_settings_text(backup)
    except HookSettingsUnusable:
        return None
    if text is None:
        return None
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    installed = payload.get("installed")
    installed = installed if isinstance(installed, str) else None
    kept = payload.get("text")
    if payload.get("existed") is False:
        return _Original(None, installed)
    return _Original(kept, installed) if isinstance(kept, str) else None


def _drop_backup(backup: Path) -> None:
    remove_settings_file(backup)
