"""Discovery: which files under the agents' folders are transcripts.

Only ``scandir`` and its cached stat: a re-scan with nothing changed costs one
directory walk and no file opens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.sources import claude, codex


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A transcript file and what its place in the tree says about it."""

    path: str
    source: str
    size: int
    mtime_ns: int
    id_hint: str  # conversation id the name implies (Claude: stem / agent hex; Codex: uuid)
    subagent: bool = False
    parent_hint: str | None = None  # the session folder a layout-2 sub-agent sits in
    meta_path: str | None = None  # layout-2 ``agent-<hex>.meta.json``


@dataclass
class Discovery:
    files: list[FoundFile] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def claude_root(explicit: Path | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    if explicit is not None:
        return explicit.expanduser().absolute()
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser().absolute() if env else Path.home() / ".claude"


def codex_root(explicit: Path | None = None) -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    if explicit is not None:
        return explicit.expanduser().absolute()
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser().absolute() if env else Path.home() / ".codex"


def _entries(path: str, found: Discovery) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except FileNotFoundError:
        return []
    except OSError as exc:
        found.unreadable.append((path, exc.strerror or str(exc)))
        return []


def _file(entry: os.DirEntry[str], found: Discovery) -> tuple[int, int] | None:
    try:
        st = entry.stat()
    except OSError as exc:
        found.unreadable.append((entry.path, exc.strerror or str(exc)))
        return None
    return st.st_size, st.st_mtime_ns


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def discover_claude(root: Path, found: Discovery) -> None:
    """Sessions, layout-1 sub-agents beside them, layout-2 sub-agents in ``<session>/subagents``."""
    for project in _entries(str(root / "projects"), found):
        if not _is_dir(project):
            continue
        for entry in _entries(project.path, found):
            name = entry.name
            if name.endswith(".jsonl") and not _is_dir(entry):  # broken links: unreadable
                stat = _file(entry, found)
                if stat is None:
                    continue
                stem = name[: -len(".jsonl")]
                if stem.startswith("agent-"):
                    found.files.append(
                        FoundFile(entry.path, claude.SOURCE, *stat, stem[6:], subagent=True)
                    )
                else:
                    found.files.append(FoundFile(entry.path, claude.SOURCE, *stat, stem))
            elif _is_dir(entry):
                sub = os.path.join(entry.path, "subagents")
                for agent in _entries(sub, found) if os.path.isdir(sub) else ():
                    aname = agent.name
                    if not (aname.startswith("agent-") and aname.endswith(".jsonl")):
                        continue
                    if _is_dir(agent):
                        continue
                    stat = _file(agent, found)
                    if stat is None:
                        continue
                    meta = os.path.join(sub, aname[: -len(".jsonl")] + ".meta.json")
                    found.files.append(
                        FoundFile(
                            agent.path,
                            claude.SOURCE,
                            *stat,
                            aname[6 : -len(".jsonl")],
                            subagent=True,
                            parent_hint=name,
                            meta_path=meta,
                        )
                    )


def _codex_walk(path: str, found: Discovery) -> None:
    for entry in _entries(path, found):
        name = entry.name
        if name.startswith("rollout-") and name.endswith(".jsonl") and not _is_dir(entry):
            stat = _file(entry, found)
            if stat is not None:
                stem = name[: -len(".jsonl")]
                found.files.append(FoundFile(entry.path, codex.SOURCE, *stat, stem[-36:]))
        elif _is_dir(entry):
            _codex_walk(entry.path, found)


def discover_codex(root: Path, found: Discovery) -> None:
    """Rollouts under ``sessions/`` (dated folders) and ``archived_sessions/``."""
    _codex_walk(str(root / "sessions"), found)
    _codex_walk(str(root / "archived_sessions"), found)
