"""Hostile ``~/.claude`` and ``~/.codex`` trees, built for real under a tmp folder.

Everything an unlucky or malicious disk can hold next to ordinary transcripts:
names that are not UTF-8, FIFOs and device links named like transcripts,
directory symlink loops, huge and deeply nested lines, byte-order marks,
timestamps and numbers out of every range. Shared by the importer tests and the
reliability suite.

    tree = build_hostile_tree(tmp_path)          # every hazard
    tree = build_hostile_tree(tmp_path, only={"fifo_transcript", "dir_loops"})
    await orch.import_sources(tree.claude, tree.codex)
    assert set(tree.good) <= {s.conversation_id for s in listed}

``tree.good`` maps the id of every session that must come out of an import to
its title; ``tree.hazards`` says what each hazard is, where it sits and what
an import must do with it (``skip`` the entry and count it, or ``import`` the
session around the bad bytes). Importing a hostile tree must never hang: run
it under a timeout.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

PROJECT = "-work-hostile"
DAY = ("2026", "03", "01")
TS = "2026-03-01T10:00:00.000Z"


@dataclass(frozen=True)
class Hazard:
    """One hostile thing in the tree and what an import must make of it."""

    name: str  # one of HAZARDS
    path: bytes  # where it is (bytes: the name may not be UTF-8)
    expect: Literal["skip", "import"]  # skipped and counted, or its session imported
    conversation_id: str | None = None  # the session an ``import`` hazard must yield


@dataclass
class HostileTree:
    claude: Path  # pass as claude_dir
    codex: Path  # pass as codex_dir
    good: dict[str, str] = field(default_factory=dict)  # conversation id -> title
    hazards: list[Hazard] = field(default_factory=list)

    def skipped(self) -> list[Hazard]:
        return [h for h in self.hazards if h.expect == "skip"]


def new_id(n: int) -> str:
    """A well-formed session id (a UUID), distinct per ``n``."""
    return str(uuid.UUID(int=0x0199_0000_0000_7000_8000_0000_0000_0000 + n))


# --- transcript lines -----------------------------------------------------


def claude_lines(sid: str, title: str, ts: str = TS, **usage: int) -> list[dict[str, Any]]:
    """A prompt and a reply of a Claude Code session (real shapes)."""
    base = {"cwd": "/work/hostile", "sessionId": sid, "gitBranch": "main", "version": "2.1.42"}
    use = {"input_tokens": 10, "output_tokens": 5} | usage
    return [
        base
        | {"type": "user", "uuid": f"{sid}-u", "timestamp": ts}
        | {"message": {"role": "user", "content": title}},
        base
        | {"type": "assistant", "uuid": f"{sid}-a", "timestamp": ts}
        | {
            "message": {
                "id": f"msg-{sid}",
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "content": [{"type": "text", "text": "done"}],
                "usage": use,
            }
        },
    ]


def codex_lines(sid: str, title: str, ts: str = TS) -> list[dict[str, Any]]:
    """Meta, a prompt and a reply of a Codex rollout (real shapes)."""
    return [
        {"timestamp": ts, "type": "session_meta", "payload": {"id": sid, "cwd": "/work/hostile"}},
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": title},
        },
        {
            "timestamp": ts,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            },
        },
    ]


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def deep_line(depth: int = 100_000) -> bytes:
    """A JSON line nested ``depth`` deep (breaks recursive decoders)."""
    return b'{"type":"user","message":{"content":' + b"[" * depth + b"]" * depth + b"}}\n"


def huge_line(size: int = 9 * 1024 * 1024) -> bytes:
    """One line over the importer's 8 MiB line cap."""
    return b'{"type":"user","message":{"content":"' + b"x" * size + b'"}}\n'


# --- the hazards ----------------------------------------------------------


def _write(path: bytes | Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class _Builder:
    def __init__(self, root: Path) -> None:
        self.tree = HostileTree(root / ".claude", root / ".codex")
        self.project = self.tree.claude / "projects" / PROJECT
        self.sessions = self.tree.codex / "sessions"
        self.day = self.sessions.joinpath(*DAY)
        self.project.mkdir(parents=True, exist_ok=True)
        self.day.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def next_id(self) -> str:
        self.n += 1
        return new_id(self.n)

    def claude(
        self, title: str, *, ts: str = TS, head: bytes = b"", tail: bytes = b"", **usage: int
    ) -> tuple[str, Path]:
        """A good Claude Code session, with ``head`` and ``tail`` bytes around its lines."""
        sid = self.next_id()
        path = self.project / f"{sid}.jsonl"
        _write(path, head + jsonl(claude_lines(sid, title, ts, **usage)) + tail)
        self.tree.good[sid] = title
        return sid, path

    def codex_path(self, sid: str, folder: Path | None = None) -> Path:
        return (folder or self.day) / f"rollout-2026-03-01T10-00-00-{sid}.jsonl"

    def codex(
        self,
        title: str,
        *,
        ts: str = TS,
        head: bytes = b"",
        tail: bytes = b"",
        extra: tuple[dict[str, Any], ...] = (),
    ) -> tuple[str, Path]:
        """A good Codex rollout, with ``extra`` lines and ``head``/``tail`` bytes around it."""
        sid = self.next_id()
        path = self.codex_path(sid)
        _write(path, head + jsonl([*codex_lines(sid, title, ts), *extra]) + tail)
        self.tree.good[sid] = title
        return sid, path

    def hazard(
        self,
        name: str,
        path: bytes | Path,
        expect: Literal["skip", "import"],
        conversation_id: str | None = None,
    ) -> None:
        raw = path if isinstance(path, bytes) else os.fsencode(path)
        self.tree.hazards.append(Hazard(name, raw, expect, conversation_id))


def _good(b: _Builder) -> None:
    b.claude("an ordinary claude session")
    b.codex("an ordinary codex session")


def _non_utf8_file(b: _Builder) -> None:
    sid = b.next_id()
    path = os.fsencode(b.project) + b"/" + sid.encode() + b"bad\xff\xfe.jsonl"
    _write(path, jsonl(claude_lines(sid, "never listed")))
    b.hazard("non_utf8_file", path, "skip")
    codex_path = os.fsencode(b.day) + b"/rollout-2026-03-01T10-00-00-bad\xff-" + sid.encode()
    _write(codex_path + b".jsonl", jsonl(codex_lines(sid, "never listed")))
    b.hazard("non_utf8_file", codex_path + b".jsonl", "skip")


def _non_utf8_dir(b: _Builder) -> None:
    folder = os.fsencode(b.tree.claude / "projects") + b"/-work-caf\xe9"
    os.mkdir(folder)
    sid = b.next_id()
    _write(folder + b"/" + sid.encode() + b".jsonl", jsonl(claude_lines(sid, "never listed")))
    b.hazard("non_utf8_dir", folder, "skip")
    codex_folder = os.fsencode(b.sessions) + b"/2026/\xfe\xff"
    os.makedirs(codex_folder)
    sid = b.next_id()
    _write(
        codex_folder + f"/rollout-2026-03-01T10-00-00-{sid}.jsonl".encode(),
        jsonl(codex_lines(sid, "never listed")),
    )
    b.hazard("non_utf8_dir", codex_folder, "skip")


def _fifo_transcript(b: _Builder) -> None:
    path = b.project / f"{b.next_id()}.jsonl"
    os.mkfifo(path)
    b.hazard("fifo_transcript", path, "skip")
    codex = b.codex_path(b.next_id())
    os.mkfifo(codex)
    b.hazard("fifo_transcript", codex, "skip")


def _fifo_meta(b: _Builder) -> None:
    """A layout-2 sub-agent whose ``.meta.json`` is a FIFO: imported, without a description."""
    parent = b.next_id()
    folder = b.project / parent / "subagents"
    folder.mkdir(parents=True)
    agent = "a" + uuid.UUID(int=b.n).hex[:16]
    lines = claude_lines(parent, "a sub-agent beside a fifo")
    for line in lines:
        line["agentId"] = agent
        line["isSidechain"] = True
    _write(folder / f"agent-{agent}.jsonl", jsonl(lines))
    os.mkfifo(folder / f"agent-{agent}.meta.json")
    b.tree.good[agent] = "a sub-agent beside a fifo"
    b.hazard("fifo_meta", folder / f"agent-{agent}.meta.json", "skip")
    b.hazard("fifo_meta", folder / f"agent-{agent}.jsonl", "import", agent)


def _dev_zero_link(b: _Builder) -> None:
    path = b.project / f"{b.next_id()}.jsonl"
    path.symlink_to("/dev/zero")
    b.hazard("dev_zero_link", path, "skip")
    codex = b.codex_path(b.next_id())
    codex.symlink_to("/dev/zero")
    b.hazard("dev_zero_link", codex, "skip")


def _dir_loops(b: _Builder) -> None:
    """``loop1 -> .``, ``loop2 -> .``, ``back -> ../..`` in a dated folder: k^depth paths
    if followed naively."""
    (b.day / "loop1").symlink_to(".")
    (b.day / "loop2").symlink_to(".")
    (b.day / "back").symlink_to("../..")
    b.hazard("dir_loops", b.day / "loop1", "skip")
    b.hazard("dir_loops", b.day / "loop2", "skip")
    b.hazard("dir_loops", b.day / "back", "skip")
    sid, _ = b.codex("a rollout inside a looping folder")
    b.hazard("dir_loops", b.codex_path(sid), "import", sid)


def _deep_line(b: _Builder) -> None:
    sid, path = b.claude("a session with a deep line", head=deep_line())
    b.hazard("deep_line", path, "import", sid)
    sid, path = b.codex("a rollout with a deep line", tail=deep_line())
    b.hazard("deep_line", path, "import", sid)


def _huge_line(b: _Builder) -> None:
    sid, path = b.claude("a session with a huge line", head=huge_line())
    b.hazard("huge_line", path, "import", sid)


def _bom(b: _Builder) -> None:
    sid, path = b.codex("a rollout starting with a BOM", head=b"\xef\xbb\xbf")
    b.hazard("bom", path, "import", sid)
    sid, path = b.claude("a session starting with a BOM", head=b"\xef\xbb\xbf")
    b.hazard("bom", path, "import", sid)


POISONED_TIMESTAMPS = (
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "2026-03-01T10:00:00+25:00",
    "9999-12-31T23:59:59.999999Z",
    "-001-01-01T00:00:00Z",
)


def _poisoned_timestamps(b: _Builder) -> None:
    for ts in POISONED_TIMESTAMPS:
        sid, path = b.claude(f"a session stamped {ts}", ts=ts)
        b.hazard("poisoned_timestamps", path, "import", sid)
        sid, path = b.codex(f"a rollout stamped {ts}", ts=ts)
        b.hazard("poisoned_timestamps", path, "import", sid)


HUGE_NUMBERS = (2**63, 2**64 - 1, -(2**63) - 1, 10**30)


def _huge_numbers(b: _Builder) -> None:
    for n in HUGE_NUMBERS:
        sid, path = b.claude(f"a session using {n} tokens", input_tokens=n, output_tokens=n)
        b.hazard("huge_numbers", path, "import", sid)
    info = {
        "total_token_usage": {"total_tokens": 2**64 - 1},
        "last_token_usage": {"input_tokens": 2**63},
        "model_context_window": 10**30,
    }
    counts = {
        "timestamp": TS,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info},
    }
    sid, path = b.codex("a rollout with huge token counts", extra=(counts,))
    b.hazard("huge_numbers", path, "import", sid)


def _outside_link(b: _Builder) -> None:
    """A project folder that is a symlink to a folder outside the tree: not followed."""
    outside = b.tree.claude.parent / "elsewhere" / "-work-outside"
    outside.mkdir(parents=True)
    sid = b.next_id()
    _write(outside / f"{sid}.jsonl", jsonl(claude_lines(sid, "never listed")))
    (b.tree.claude / "projects" / "-work-linked-out").symlink_to(outside)
    b.hazard("outside_link", b.tree.claude / "projects" / "-work-linked-out", "skip")


HAZARDS: dict[str, Callable[[_Builder], None]] = {
    "non_utf8_file": _non_utf8_file,
    "non_utf8_dir": _non_utf8_dir,
    "fifo_transcript": _fifo_transcript,
    "fifo_meta": _fifo_meta,
    "dev_zero_link": _dev_zero_link,
    "dir_loops": _dir_loops,
    "deep_line": _deep_line,
    "huge_line": _huge_line,
    "bom": _bom,
    "poisoned_timestamps": _poisoned_timestamps,
    "huge_numbers": _huge_numbers,
    "outside_link": _outside_link,
}


def build_hostile_tree(root: Path, only: Iterable[str] | None = None) -> HostileTree:
    """``root/.claude`` and ``root/.codex`` holding two ordinary sessions and the hazards.

    ``only``: the names of the hazards to build (all of ``HAZARDS`` by default).
    """
    names = list(HAZARDS) if only is None else list(only)
    unknown = set(names) - set(HAZARDS)
    if unknown:
        raise ValueError(f"unknown hazards: {sorted(unknown)}")
    builder = _Builder(root)
    _good(builder)
    for name in names:
        HAZARDS[name](builder)
    return builder.tree
