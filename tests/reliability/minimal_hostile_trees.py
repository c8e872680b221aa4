"""A minimal hostile tree, used only until the shared ``tests/hostile_trees.py`` is present.

Same entry point and shape: ``build_hostile_tree(root)`` returns the two roots
and the ids of the ordinary sessions an import must still list.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

TS = "2026-03-01T10:00:00.000Z"


@dataclass
class HostileTree:
    claude: Path
    codex: Path
    good: dict[str, str] = field(default_factory=dict)


def _claude(path: Path | bytes, sid: str, head: bytes = b"") -> None:
    line = {
        "type": "user",
        "sessionId": sid,
        "uuid": "u1",
        "cwd": "/work/hostile",
        "timestamp": TS,
        "message": {"role": "user", "content": f"session {sid}"},
    }
    with open(path, "wb") as f:
        f.write(head + json.dumps(line).encode() + b"\n")


def build_hostile_tree(root: Path) -> HostileTree:
    tree = HostileTree(root / ".claude", root / ".codex")
    project = tree.claude / "projects" / "-work-hostile"
    day = tree.codex / "sessions" / "2026" / "03" / "01"
    project.mkdir(parents=True)
    day.mkdir(parents=True)
    good = "01990000-0000-7000-8000-000000000001"
    _claude(project / f"{good}.jsonl", good)
    tree.good[good] = f"session {good}"
    deep = "01990000-0000-7000-8000-000000000002"
    _claude(project / f"{deep}.jsonl", deep, head=b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    tree.good[deep] = f"session {deep}"
    bad = "01990000-0000-7000-8000-000000000003"
    _claude(os.fsencode(project) + f"/{bad}".encode() + b"bad\xff\xfe.jsonl", bad)
    os.mkfifo(project / "01990000-0000-7000-8000-000000000004.jsonl")
    (project / "01990000-0000-7000-8000-000000000005.jsonl").symlink_to("/dev/zero")
    (day / "loop1").symlink_to(".")
    (day / "loop2").symlink_to(".")
    return tree
