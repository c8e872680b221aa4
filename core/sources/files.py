"""Discovery: which files under the agents' folders are transcripts.

Only ``scandir`` and a stat per candidate: a re-scan with nothing changed costs
one directory walk and no file opens. Nothing found on disk is trusted (see
docs/import.md, "Odd names and odd files"):

- a name that is not valid UTF-8 is skipped (``bad_name``), never passed on;
- only regular files are taken; FIFOs, devices and sockets named like
  transcripts are skipped (``not_regular``);
- every folder is walked once (``loop``: a symlink back to a folder already
  walked) and at most ``MAX_DEPTH`` below its root (``too_deep``);
- a symlink is followed only when its target lies inside the agent's folder
  (``outside_tree`` otherwise); the roots themselves may be symlinks.

Every skip is counted and named in the import report.
"""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from core.sources import claude, codex
from core.sources.safe_files import file_kind, is_utf8_name, shown_path

MAX_DEPTH = 8
"""Folders below a walk root (Codex uses four: ``sessions/YYYY/MM/DD``)."""

SkipKind = Literal["bad_name", "not_regular", "loop", "outside_tree", "too_deep"]
NamePredicate = Callable[[str], bool]


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


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    """A file or folder discovery left alone, and why."""

    path: str  # shown form: bytes that are not UTF-8 as ``\xff`` escapes
    kind: SkipKind
    reason: str


@dataclass
class Discovery:
    """What a walk found. Files ``known`` lists unchanged are not held in ``files``
    (a re-scan keeps only the changed ones, so a huge tree is never held in full);
    ``seen`` counts every transcript found, kept or not."""

    files: list[FoundFile] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    skipped: list[SkippedEntry] = field(default_factory=list)
    known: dict[str, tuple[int, int]] | None = None  # path -> (size, mtime_ns) unchanged
    seen: int = 0

    def wants(self, path: str, size: int, mtime_ns: int) -> bool:
        """Count a found transcript; whether to build and keep its :class:`FoundFile`
        (not when ``known`` has it with this size and mtime)."""
        self.seen += 1
        return self.known is None or self.known.get(path) != (size, mtime_ns)

    def skip(self, path: str, kind: SkipKind, reason: str) -> None:
        self.skipped.append(SkippedEntry(shown_path(path), kind, reason))


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
        found.unreadable.append((shown_path(path), exc.strerror or str(exc)))
        return []


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


_NAME = operator.attrgetter("name")


def _by_name(entries: list[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
    """Sorted by name, symlinks after everything else (so a folder is walked under
    its own name rather than an alias's)."""
    entries.sort(key=_NAME)
    links = [e for e in entries if _is_link(e)]
    if not links:
        return entries
    return [e for e in entries if not _is_link(e)] + links


def _plain_stat(entry: os.DirEntry[str]) -> os.stat_result | None:
    """The stat of an entry the listing says is a plain file (not a link, not a
    folder) with an ASCII name: one system call. None for anything else, a type
    changed since the listing included, which the careful path then judges."""
    try:
        if not (entry.name.isascii() and entry.is_file(follow_symlinks=False)):
            return None
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _inside(path: str, bounds: tuple[str, ...]) -> bool:
    return any(path == b or path.startswith(b + os.sep) for b in bounds)


def _never(_name: str) -> bool:
    return False


def _always(_name: str) -> bool:
    return True


class Child(NamedTuple):
    """A folder or regular file found in a folder, with its (followed) stat.

    A named tuple: one is built per file of every walk, and a tuple is the
    cheapest immutable record to build."""

    entry: os.DirEntry[str]
    st: os.stat_result
    link: bool

    @property
    def path(self) -> str:
        return self.entry.path

    @property
    def name(self) -> str:
        return self.entry.name


class _Walk:
    """The folders of one agent's tree: each walked once, depth-bounded, links kept inside."""

    def __init__(self, found: Discovery) -> None:
        self.found = found
        self.bounds: tuple[str, ...] = ()  # the walk roots, resolved: links may point in there
        self.visited: set[tuple[int, int]] = set()
        self.listed: dict[str, os.DirEntry[str]] = {}  # the last folder ``children`` listed

    def root(self, path: Path) -> str | None:
        """Start a walk at ``path`` (a symlink is fine: the user chose it); None if absent."""
        if not is_utf8_name(str(path)):
            self.found.skip(str(path), "bad_name", "path is not valid UTF-8")
            return None
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.found.unreadable.append((shown_path(str(path)), exc.strerror or str(exc)))
            return None
        if not stat.S_ISDIR(st.st_mode) or not self._first_visit(st):
            return None
        self.bounds = (*self.bounds, real)
        return str(path)

    def children(
        self, path: str, files: NamePredicate, dirs: NamePredicate = _always
    ) -> tuple[list[Child], list[Child]]:
        """The folders (named as ``dirs`` wants) and regular files (``files``) in ``path``.

        Entries whose names neither predicate wants are never stat'ed nor
        reported. Sorted by name, real folders before symlinks to folders, so
        a folder is walked under its own name rather than an alias's.
        """
        found_dirs: list[Child] = []
        found_files: list[Child] = []
        entries = _by_name(_entries(path, self.found))
        self.listed = {e.name: e for e in entries}
        for entry in entries:
            if not self._plain_file(entry, files, found_files):
                self._judge(entry, files, dirs, found_dirs, found_files)
        return found_dirs, found_files

    @staticmethod
    def _plain_file(entry: os.DirEntry[str], files: NamePredicate, found: list[Child]) -> bool:
        """The hot path of :meth:`children`: a wanted plain file (:func:`_plain_stat`).
        False for anything else, which :meth:`_judge` then weighs with care."""
        if not files(entry.name) or (st := _plain_stat(entry)) is None:
            return False
        found.append(Child(entry, st, False))
        return True

    def _judge(
        self,
        entry: os.DirEntry[str],
        files: NamePredicate,
        dirs: NamePredicate,
        found_dirs: list[Child],
        found_files: list[Child],
    ) -> None:
        """One entry of :meth:`children`: taken into a list, skipped and counted, or ignored."""
        name = entry.name
        want_file, want_dir = files(name), dirs(name)
        if not (want_file or want_dir):
            return
        try:
            link = entry.is_symlink()
            real_dir = not link and entry.is_dir(follow_symlinks=False)
        except OSError:
            return
        if real_dir and not want_dir:
            return
        if not is_utf8_name(name):
            self.found.skip(entry.path, "bad_name", "name is not valid UTF-8")
            return
        if link and not _inside(os.path.realpath(entry.path), self.bounds):
            self.found.skip(entry.path, "outside_tree", "symlink to outside the folder")
            return
        try:
            st = entry.stat()
        except OSError as exc:  # a broken link, a link loop, a vanished file
            if want_file:
                self.found.unreadable.append((entry.path, exc.strerror or str(exc)))
            return
        if stat.S_ISDIR(st.st_mode):
            if want_dir:
                found_dirs.append(Child(entry, st, link))
        elif want_file:
            if stat.S_ISREG(st.st_mode):
                found_files.append(Child(entry, st, link))
            else:
                self.found.skip(entry.path, "not_regular", file_kind(st.st_mode))

    def side_file(self, path: str) -> str | None:
        """``path`` if it is a regular file inside the tree (a sub-agent's ``.meta.json``)."""
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                if not _inside(os.path.realpath(path), self.bounds):
                    self.found.skip(path, "outside_tree", "symlink to outside the folder")
                    return None
                st = os.stat(path)
        except OSError:
            return None  # absent (or unreadable): the sub-agent simply has no description
        if not stat.S_ISREG(st.st_mode):
            self.found.skip(path, "not_regular", file_kind(st.st_mode))
            return None
        return path

    def listed_side_file(self, name: str) -> str | None:
        """:meth:`side_file` for ``name`` in the folder ``children`` listed last.

        A name not in the listing is absent (no system call); a plain file the
        listing says is regular is taken as it is (its type came with the
        listing); anything else (a symlink, an unknown type) goes through
        :meth:`side_file`.
        """
        entry = self.listed.get(name)
        if entry is None:
            return None
        try:
            if not entry.is_symlink() and entry.is_file(follow_symlinks=False):
                return entry.path
        except OSError:
            pass
        return self.side_file(entry.path)

    def _first_visit(self, st: os.stat_result) -> bool:
        key = (st.st_dev, st.st_ino)
        if key in self.visited:
            return False
        self.visited.add(key)
        return True

    def enter(self, folder: Child, depth: int) -> bool:
        """Whether to walk ``folder``, ``depth`` levels below its root: once, not too deep."""
        if depth > MAX_DEPTH:
            self.found.skip(folder.path, "too_deep", f"more than {MAX_DEPTH} folders deep")
            return False
        if not self._first_visit(folder.st):
            self.found.skip(folder.path, "loop", "folder already walked (a symlink loop or alias)")
            return False
        return True


def _jsonl(name: str) -> bool:
    return name.endswith(".jsonl")


def _subagent(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _subagents_dir(name: str) -> bool:
    return name == "subagents"


def discover_claude(root: Path, found: Discovery) -> None:
    """Sessions, layout-1 sub-agents beside them, layout-2 sub-agents in ``<session>/subagents``."""
    walk = _Walk(found)
    projects = walk.root(root / "projects")
    if projects is None:
        return
    for project in walk.children(projects, files=_never)[0]:
        if not walk.enter(project, 1):
            continue
        sessions, transcripts = walk.children(project.path, files=_jsonl)
        for t in transcripts:
            stem = t.name[: -len(".jsonl")]
            size, mtime = t.st.st_size, t.st.st_mtime_ns
            if not found.wants(t.path, size, mtime):
                continue
            if stem.startswith("agent-"):
                found.files.append(
                    FoundFile(t.path, claude.SOURCE, size, mtime, stem[6:], subagent=True)
                )
            else:
                found.files.append(FoundFile(t.path, claude.SOURCE, size, mtime, stem))
        for session in sessions:
            if not walk.enter(session, 2):
                continue
            for sub in walk.children(session.path, files=_never, dirs=_subagents_dir)[0]:
                if walk.enter(sub, 3):
                    _subagents(walk, sub.path, session.name, found)


def _subagents(walk: _Walk, folder: str, parent: str, found: Discovery) -> None:
    """The ``agent-<hex>.jsonl`` files of one ``subagents`` folder (thousands, in some).

    The hot loop of a large tree: a plain file (by the listing's type: not a
    link, not a folder) with an ASCII name costs one ``stat``, and an unchanged
    one (``found.known``) nothing more. Anything else is judged entry by entry
    as :meth:`_Walk.children` does, in the same order.
    """
    entries = _entries(folder, found)
    known = found.known
    odd: list[os.DirEntry[str]] = []
    candidates: list[tuple[os.DirEntry[str], os.stat_result]] = []
    odd_meta: set[str] = set()  # agent file names whose side file is not a plain file
    for entry in entries:
        name = entry.name
        try:
            if name.endswith(".jsonl"):
                if not name.startswith("agent-"):
                    continue
                st = _plain_stat(entry)
                if st is None:
                    odd.append(entry)  # a link, an odd type or name: judged with care
                else:
                    candidates.append((entry, st))
            elif name.endswith(".meta.json") and (
                entry.is_symlink() or not entry.is_file(follow_symlinks=False)
            ):
                odd_meta.add(name[: -len(".meta.json")] + ".jsonl")
        except OSError:
            if name.endswith(".jsonl"):
                odd.append(entry)
            else:
                odd_meta.add(name[: -len(".meta.json")] + ".jsonl")
    plain: list[tuple[os.DirEntry[str], os.stat_result]] = []
    for entry, st in candidates:
        if odd_meta and entry.name in odd_meta:
            odd.append(entry)  # an odd side file: reported by the careful path
            continue
        found.seen += 1
        if known is not None and known.get(entry.path) == (st.st_size, st.st_mtime_ns):
            continue
        plain.append((entry, st))
    if not (plain or odd):
        return
    listed = {e.name: e for e in entries}
    walk.listed = listed
    for entry, st in plain:
        stem = entry.name[: -len(".jsonl")]
        meta = listed.get(stem + ".meta.json")
        found.files.append(
            FoundFile(
                entry.path,
                claude.SOURCE,
                st.st_size,
                st.st_mtime_ns,
                stem[6:],
                subagent=True,
                parent_hint=parent,
                meta_path=meta.path if meta is not None else None,
            )
        )
    if not odd:
        return
    agents: list[Child] = []
    for entry in sorted(odd, key=lambda e: (_is_link(e), e.name)):
        walk._judge(entry, _subagent, _never, [], agents)
    for agent in agents:
        stem = agent.name[: -len(".jsonl")]
        # Judged for every agent, changed or not: an odd side file is reported on each walk.
        meta_path = walk.listed_side_file(stem + ".meta.json")
        if not found.wants(agent.path, agent.st.st_size, agent.st.st_mtime_ns):
            continue
        found.files.append(
            FoundFile(
                agent.path,
                claude.SOURCE,
                agent.st.st_size,
                agent.st.st_mtime_ns,
                stem[6:],
                subagent=True,
                parent_hint=parent,
                meta_path=meta_path,
            )
        )


def _rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


def _codex_walk(
    walk: _Walk, path: str, depth: int, found: Discovery, links: list[tuple[Child, int]]
) -> None:
    folders, rollouts = walk.children(path, files=_rollout)
    for r in rollouts:
        if not found.wants(r.path, r.st.st_size, r.st.st_mtime_ns):
            continue
        stem = r.name[: -len(".jsonl")]
        found.files.append(
            FoundFile(r.path, codex.SOURCE, r.st.st_size, r.st.st_mtime_ns, stem[-36:])
        )
    for folder in folders:
        if folder.link:
            links.append((folder, depth))  # after every real folder: see ``children``
        elif walk.enter(folder, depth):
            _codex_walk(walk, folder.path, depth + 1, found, links)


def discover_codex(root: Path, found: Discovery) -> None:
    """Rollouts under ``sessions/`` (dated folders) and ``archived_sessions/``."""
    walk = _Walk(found)
    links: list[tuple[Child, int]] = []
    for name in ("sessions", "archived_sessions"):
        start = walk.root(root / name)
        if start is not None:
            _codex_walk(walk, start, 1, found, links)
    while links:
        folder, depth = links.pop(0)
        if walk.enter(folder, depth):
            _codex_walk(walk, folder.path, depth + 1, found, links)


def _within(path: str, root: Path) -> tuple[str, ...] | None:
    """The parts of ``path`` below ``root`` (as given, or resolved), or None if outside."""
    for base in (str(root), os.path.realpath(root)):
        if path.startswith(base + os.sep):
            return tuple(p for p in path[len(base) + 1 :].split(os.sep) if p)
    return None


def classify(path: str, claude_dir: Path, codex_dir: Path) -> FoundFile | None:
    """One changed file as discovery would have found it, or None if it is no transcript.

    The same rules as the walk, for one path a file watcher named: a UTF-8
    name, the agents' layouts (Claude Code projects, layout-1 and layout-2
    sub-agents; Codex rollouts at most ``MAX_DEPTH`` deep), a regular file,
    and nothing that resolves outside the agent's folder (through a symlinked
    file or folder). Nothing is opened.
    """
    if not is_utf8_name(path) or not path.endswith(".jsonl"):
        return None
    projects = claude_dir / "projects"
    parts = _within(path, projects)
    if parts is not None:
        return _claude_file(path, parts, projects)
    for name in ("sessions", "archived_sessions"):
        folder = codex_dir / name
        parts = _within(path, folder)
        if parts is not None:
            if len(parts) > MAX_DEPTH + 1 or not _rollout(parts[-1]):
                return None
            st = _regular_inside(path, folder)
            if st is None:
                return None
            stem = parts[-1][: -len(".jsonl")]
            return FoundFile(path, codex.SOURCE, st.st_size, st.st_mtime_ns, stem[-36:])
    return None


def _claude_file(path: str, parts: tuple[str, ...], projects: Path) -> FoundFile | None:
    name = parts[-1]
    stem = name[: -len(".jsonl")]
    layout2 = len(parts) == 4 and parts[2] == "subagents" and _subagent(name)
    if len(parts) != 2 and not layout2:
        return None
    st = _regular_inside(path, projects)
    if st is None:
        return None
    if layout2:
        meta = os.path.join(os.path.dirname(path), stem + ".meta.json")
        meta_st = _regular_inside(meta, projects)
        return FoundFile(
            path,
            claude.SOURCE,
            st.st_size,
            st.st_mtime_ns,
            stem[6:],
            subagent=True,
            parent_hint=parts[1],
            meta_path=meta if meta_st is not None else None,
        )
    if stem.startswith("agent-"):
        return FoundFile(path, claude.SOURCE, st.st_size, st.st_mtime_ns, stem[6:], subagent=True)
    return FoundFile(path, claude.SOURCE, st.st_size, st.st_mtime_ns, stem)


def _regular_inside(path: str, root: Path) -> os.stat_result | None:
    """The stat of ``path`` if it is a regular file that resolves inside ``root``."""
    real = os.path.realpath(path)
    if not _inside(real, (os.path.realpath(root),)):
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None
