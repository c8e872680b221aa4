"""Installing delegate's hooks into an agent CLI's settings, and taking them out again.

Claude Code reads hooks from ``settings.json`` in its folder (``$CLAUDE_CONFIG_DIR``,
else ``~/.claude``): ``{"hooks": {EVENT: [{"hooks": [{"type": "command", ...}]}]}}``.
delegate adds one group of its own per event, after the person's own groups,
and touches nothing else. Codex reads ``notify`` (a program run after every
turn) from ``config.toml`` in ``$CODEX_HOME`` (else ``~/.codex``); it holds
one program, so delegate installs there only when it is free.

Before the first change the file's exact text is kept in the data folder;
``uninstall`` takes delegate's entries out and, when what remains is what was
there, writes that text back byte for byte (or removes a file delegate created).
A person's later edits are kept: then only delegate's entries go.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import ids
from core.errors import HookSettingsUnusable, InvalidRequest
from core.hooks.files import read_settings_text, remove_settings_file, write_settings_text

CLAUDE_EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop")
"""The Claude Code hook events delegate handles (see docs/hooks.md)."""
CODEX_EVENTS: tuple[str, ...] = ("notify",)
"""Codex's one turn-complete program."""
AGENT_EVENTS: dict[str, tuple[str, ...]] = {ids.CLAUDE_CODE: CLAUDE_EVENTS, ids.CODEX: CODEX_EVENTS}
HOOK_TIMEOUT_S = 60
"""How long Claude Code lets one of delegate's hooks run (an import and a few writes)."""
BACKUP_FOLDER = "hooks"
"""Where in the data folder the settings as they were before ``install`` are kept."""

_OURS = re.compile(r"(?:^|\s)(?:-m tui\.cli|\S*delegate)\s.*\bhook (claude-code|codex) (\w+)$")


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
                        "command": shlex.join(hook_command(data_dir, ids.CLAUDE_CODE, event)),
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
    wanted = claude_hooks(data_dir)
    try:
        settings = _claude_settings(path, read_settings_text(path))
    except HookSettingsUnusable:
        return list(wanted)
    hooks = settings.get("hooks", {})
    return [
        event
        for event, groups in wanted.items()
        if not any(group in groups for group in hooks.get(event, []))
    ]


def is_delegate_command(command: object, agent: str) -> bool:
    """Whether a hook command (a shell line or an argv) is one delegate installed."""
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = shlex.join(command)
    if not isinstance(command, str):
        return False
    match = _OURS.search(command.strip())
    return match is not None and match.group(1) == agent


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
    text = read_settings_text(path)
    if agent == ids.CLAUDE_CODE:
        settings = _claude_settings(path, text)
        if not _claude_ours(settings):
            _keep_original(data_dir, agent, path, text)
        cleaned = _claude_without_ours(settings)
        hooks = cleaned.setdefault("hooks", {})
        for event, group in claude_hooks(data_dir).items():
            hooks.setdefault(event, []).extend(group)
        new_text = json.dumps(cleaned, indent=2, ensure_ascii=False) + "\n"
    else:
        config = _codex_config(path, text)
        notify = config.get("notify")
        if notify is not None and not is_delegate_command(notify, agent):
            raise HookSettingsUnusable(
                f"{path} already runs a notify program ({_shown(notify)}); Codex runs only"
                " one, so delegate's is not installed. Remove yours to install delegate's."
            )
        if notify is None:
            _keep_original(data_dir, agent, path, text)
        line = "notify = " + json.dumps(hook_command(data_dir, agent, "notify"))
        new_text = _codex_with_notify(text or "", line)
    changed = new_text != text
    if changed:
        write_settings_text(path, new_text)
    status = status_of(agent, path)
    status.changed = changed
    return status


def uninstall(agent: str, path: Path, data_dir: Path) -> HooksStatus:
    """Take delegate's hooks out of ``path``; what was there before comes back exactly."""
    text = read_settings_text(path)
    backup = _backup_path(data_dir, agent, path)
    original = _read_backup(backup)
    if text is None:
        _drop_backup(backup)
        return HooksStatus(agent, str(path), missing=list(AGENT_EVENTS[agent]))
    if agent == ids.CLAUDE_CODE:
        settings = _claude_settings(path, text)
        if not _claude_ours(settings):
            _drop_backup(backup)
            return status_of(agent, path)
        cleaned: Any = _claude_without_ours(settings)
        remaining = json.dumps(cleaned, indent=2, ensure_ascii=False) + "\n"
        same_as_before = original is not None and _normal(_claude_parsed(original)) == _normal(
            cleaned
        )
    else:
        config = _codex_config(path, text)
        if not is_delegate_command(config.get("notify"), agent):
            _drop_backup(backup)
            return status_of(agent, path)
        remaining = _codex_without_notify(text)
        same_as_before = original is not None and _codex_parsed(original) == _codex_parsed(
            remaining
        )
    if same_as_before and original is not None:
        if original.text is None:
            remove_settings_file(path)
        else:
            write_settings_text(path, original.text)
        note = "restored as it was before install"
    else:
        write_settings_text(path, remaining)
        note = "delegate's hooks removed; later edits kept"
    _drop_backup(backup)
    status = status_of(agent, path)
    status.changed, status.note = True, note
    return status


def status_of(agent: str, path: Path) -> HooksStatus:
    """Which of delegate's hooks ``path`` holds."""
    text = read_settings_text(path)
    if agent == ids.CLAUDE_CODE:
        settings = _claude_settings(path, text)
        found = _claude_ours(settings)
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


# --- Claude Code settings.json -------------------------------------------------


def _claude_parsed(original: _Original) -> object:
    if original.text is None:
        return {}
    try:
        return json.loads(original.text)
    except ValueError:
        return None


def _normal(settings: object) -> object:
    """Settings compared for sameness: empty hook lists and an empty ``hooks`` left out."""
    if not isinstance(settings, dict):
        return settings
    normal = dict(settings)
    hooks = normal.get("hooks")
    if isinstance(hooks, dict):
        hooks = {event: groups for event, groups in hooks.items() if groups}
        if hooks:
            normal["hooks"] = hooks
        else:
            del normal["hooks"]
    return normal


def _claude_settings(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise HookSettingsUnusable(
            f"{path} is not valid JSON ({exc}); fix it, then install again"
        ) from None
    if not isinstance(settings, dict):
        raise HookSettingsUnusable(f"{path} does not hold a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise HookSettingsUnusable(f"{path}: 'hooks' must map event names to lists of hook groups")
    return settings


def _claude_group_is_ours(group: object) -> bool:
    if not isinstance(group, dict):
        return False
    entries = group.get("hooks")
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(
            isinstance(e, dict) and is_delegate_command(e.get("command"), ids.CLAUDE_CODE)
            for e in entries
        )
    )


def _claude_ours(settings: dict[str, Any]) -> set[str]:
    """The events holding one of delegate's groups."""
    hooks = settings.get("hooks", {})
    return {
        event
        for event, groups in hooks.items()
        if any(_claude_group_is_ours(group) for group in groups)
    }


def _claude_without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy without delegate's groups, and without the containers only they filled."""
    cleaned = json.loads(json.dumps(settings))
    hooks = cleaned.get("hooks")
    if not isinstance(hooks, dict):
        return dict(cleaned)
    for event in list(hooks):
        kept = [g for g in hooks[event] if not _claude_group_is_ours(g)]
        if kept or not hooks[event]:
            hooks[event] = kept
        else:
            del hooks[event]  # only delegate's groups were there
    return dict(cleaned)


# --- Codex config.toml -------------------------------------------------------

_NOTIFY_LINE = re.compile(r"^notify\s*=.*\n?", re.MULTILINE)


def _codex_config(path: Path, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HookSettingsUnusable(
            f"{path} is not valid TOML ({exc}); fix it, then install again"
        ) from None


def _codex_parsed(original: _Original | str) -> object:
    text = original if isinstance(original, str) else original.text
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return None


def _codex_with_notify(text: str, line: str) -> str:
    """``text`` with delegate's ``notify`` line: in place of its own, else first (a
    top-level key must come before any table)."""
    without = _codex_without_notify(text)
    return f"{line}\n{without}"


def _codex_without_notify(text: str) -> str:
    """``text`` without its top-level ``notify = [...]`` line (delegate's is one line)."""
    match = re.search(r"^\s*\[", text, re.MULTILINE)  # the first table: top level ends
    head, rest = (text, "") if match is None else (text[: match.start()], text[match.start() :])
    return _NOTIFY_LINE.sub("", head, count=1) + rest


def _shown(command: object) -> str:
    return shlex.join(command) if isinstance(command, list) else str(command)


# --- the settings as they were -------------------------------------------------


@dataclass(frozen=True)
class _Original:
    text: str | None  # None: there was no file


def _backup_path(data_dir: Path, agent: str, path: Path) -> Path:
    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return data_dir / BACKUP_FOLDER / f"{agent}-{digest}.json"


def _keep_original(data_dir: Path, agent: str, path: Path, text: str | None) -> None:
    backup = _backup_path(data_dir, agent, path)
    payload = {"settings": str(path.absolute()), "existed": text is not None, "text": text}
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
    kept = payload.get("text")
    if payload.get("existed") is False:
        return _Original(None)
    return _Original(kept) if isinstance(kept, str) else None


def _drop_backup(backup: Path) -> None:
    remove_settings_file(backup)
