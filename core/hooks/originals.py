"""The settings as they were before ``install``: kept in the data folder, so that
``uninstall`` on a file nobody touched since writes the first text back byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from core import ids
from core.errors import HookSettingsUnusable
from core.hooks.claude_file import claude_meaning, claude_settings
from core.hooks.codex_file import codex_config
from core.hooks.files import read_settings_text, remove_settings_file, write_settings_text

BACKUP_FOLDER = "hooks"
"""Where in the data folder the settings as they were before ``install`` are kept."""


@dataclass(frozen=True)
class Original:
    text: str | None  # None: there was no file
    installed: str | None  # what delegate wrote (None: not known, an older backup)

    def matches(self, agent: str, current: str) -> bool:
        """Whether ``current`` is what delegate left: then ``text`` is put back as is."""
        if self.installed is not None:
            return current == self.installed
        if agent == ids.CLAUDE_CODE:  # an older delegate's backup: compare meanings
            try:
                was = claude_settings(Path("settings"), self.text)
                now = claude_settings(Path("settings"), current)
            except HookSettingsUnusable:
                return False
            return claude_meaning(was) == claude_meaning(now)
        try:
            was_toml = codex_config(Path("config"), self.text)
            now_toml = codex_config(Path("config"), current)
        except HookSettingsUnusable:
            return False
        now_toml.pop("notify", None)
        return was_toml == now_toml


def backup_path(data_dir: Path, agent: str, path: Path) -> Path:
    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return data_dir / BACKUP_FOLDER / f"{agent}-{digest}.json"


def lock_path(data_dir: Path, agent: str, path: Path) -> Path:
    return backup_path(data_dir, agent, path).with_suffix(".lock")


def keep_original(backup: Path, path: Path, text: str | None, installed: str | None) -> None:
    payload = {
        "settings": str(path.absolute()),
        "existed": text is not None,
        "text": text,
        "installed": installed,
    }
    write_settings_text(backup, json.dumps(payload, ensure_ascii=False) + "\n")


def read_backup(backup: Path) -> Original | None:
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
        return Original(None, installed)
    return Original(kept, installed) if isinstance(kept, str) else None


def drop_backup(backup: Path) -> None:
    remove_settings_file(backup)
