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

This module owns the two verbs and the status; the commands are
:mod:`core.hooks.commands`, each file's edits :mod:`core.hooks.claude_file` and
:mod:`core.hooks.codex_file`, the kept originals :mod:`core.hooks.originals`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core import ids
from core.errors import InvalidRequest
from core.hooks.claude_file import (
    claude_installed,
    claude_ours,
    claude_removed,
    claude_settings,
    missing_for,
)
from core.hooks.codex_file import codex_config, codex_installed, codex_removed
from core.hooks.commands import (
    AGENT_EVENTS,
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    HOOK_TIMEOUT_S,
    MARKER,
    claude_command,
    claude_hooks,
    codex_notify,
    hook_command,
    is_delegate_command,
)
from core.hooks.files import edit_settings, read_settings_text
from core.hooks.originals import (
    BACKUP_FOLDER,
    backup_path,
    drop_backup,
    keep_original,
    lock_path,
    read_backup,
)

__all__ = [
    "AGENT_EVENTS",
    "BACKUP_FOLDER",
    "CLAUDE_EVENTS",
    "CODEX_EVENTS",
    "HOOK_TIMEOUT_S",
    "MARKER",
    "HooksStatus",
    "claude_command",
    "claude_hooks",
    "codex_notify",
    "hook_command",
    "install",
    "is_delegate_command",
    "missing_for",
    "settings_path",
    "status_of",
    "uninstall",
]


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
            return claude_installed(path, text, data_dir)
        return codex_installed(path, text, data_dir)

    backup = backup_path(data_dir, agent, path)
    before, after = edit_settings(path, compute, lock_path(data_dir, agent, path))
    changed = after != before
    if changed:
        original = read_backup(backup)
        if not _has_ours(agent, before):
            keep_original(backup, path, before, after)
        elif original is not None and original.installed == before:
            keep_original(backup, path, original.text, after)
        else:
            drop_backup(backup)  # the file changed since: its first text is no longer the base
    status = status_of(agent, path)
    status.changed = changed
    return status


def uninstall(agent: str, path: Path, data_dir: Path) -> HooksStatus:
    """Take delegate's hooks out of ``path``; what was there before comes back exactly."""
    if agent not in AGENT_EVENTS:
        raise InvalidRequest(f"hooks are for claude-code or codex, not {agent!r}")
    backup = backup_path(data_dir, agent, path)
    original = read_backup(backup)
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
            return claude_removed(path, text)
        return codex_removed(path, text)

    before, after = edit_settings(path, compute, lock_path(data_dir, agent, path))
    drop_backup(backup)
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
        found = claude_ours(claude_settings(path, text))
    else:
        config = codex_config(path, text)
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
        return bool(claude_ours(claude_settings(where, text)))
    return is_delegate_command(codex_config(where, text).get("notify"), agent)
