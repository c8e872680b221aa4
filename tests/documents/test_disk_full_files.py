"""Every file delegate writes, on a full disk: one typed ``disk_full`` naming the folder,
no temporary file left, the old file unchanged; and the same write works once space
is freed.

The atomic-write helper is driven with an injected ``ENOSPC`` / ``EDQUOT`` (its
``write`` parameter, any machine); the writers built on it — hand-offs and their
pending note, capsules, the capsule inbox, compact returns' hand-off files, hook
settings — on a real size-limited tmpfs (root only; skipped with the reason).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from full_disk import SmallDisk, small_disk

from core.atomic_files import replace_atomically, write_temporary
from core.capsules.inbox import remember
from core.capsules.storage import save_capsule
from core.documents.handoff_files import write_handoff_file, write_pending_note
from core.errors import DiskFull
from core.hooks.files import write_settings_text
from core.returns.files import write_handoff
from core.returns.model import AgentRole
from core.returns.paths import GroupPaths

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _refusing(code: int, after: int = 0) -> Callable[[int, memoryview], int]:
    """A ``write`` that takes ``after`` bytes, then refuses with ``code``."""
    taken = 0

    def write(fd: int, view: memoryview) -> int:
        nonlocal taken
        if taken >= after:
            raise OSError(code, os.strerror(code))
        n = os.write(fd, view[: max(1, min(len(view), after - taken))])
        taken += n
        return n

    return write


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
@pytest.mark.parametrize("after", [0, 1, 5000])
def test_a_refused_write_is_disk_full_and_leaves_the_old_file(
    tmp_path: Path, code: int, after: int
) -> None:
    (tmp_path / "note.md").write_text("old\n")
    with pytest.raises(DiskFull) as raised:
        replace_atomically(tmp_path, "note.md", b"new " * 4000, write=_refusing(code, after))
    assert raised.value.code == "disk_full"
    assert raised.value.folder == str(tmp_path)
    assert f"free space in {tmp_path} and retry" in raised.value.message
    assert _names(tmp_path) == {"note.md"}  # no temporary file left
    assert (tmp_path / "note.md").read_text() == "old\n"

    replace_atomically(tmp_path, "note.md", b"new\n")  # room again
    assert (tmp_path / "note.md").read_text() == "new\n"
    assert _names(tmp_path) == {"note.md"}


def test_another_write_failure_stays_what_it_is_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="Input/output error") as raised:
        write_temporary(tmp_path, b"x" * 100, write=_refusing(errno.EIO, 10))
    assert not isinstance(raised.value, DiskFull)
    assert raised.value.errno == errno.EIO
    assert _names(tmp_path) == set()


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "mnt", "2m") as mounted:
        if isinstance(mounted, str):
            pytest.skip(mounted)
        yield mounted


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the filler, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".filler"
    }


def _developer() -> dict[str, object]:
    return {
        "from_agent": "developer",
        "to_agent": "qa_expert",
        "status": "READY_FOR_QA",
        "summary": "Implemented JWT auth with 3 endpoints, 15 tests passing " + "x" * 3000,
        "files_modified": ["src/auth/jwt_handler.py"],
        "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
        "artifacts": {"reasoning": "reasoning/developer_AUTH.md"},
    }


BIG = "# Hand-off\n\n" + "A line of the hand-off that takes some room.\n" * 400

WRITERS: dict[str, Callable[[Path], object]] = {
    "hand-off": lambda repo: write_handoff_file(repo, BIG, NOW),
    "pending note": lambda repo: write_pending_note(repo, repo / "h.md", "delegate x " * 900),
    "capsule": lambda repo: save_capsule(repo, BIG, branch="main", created=NOW),
    "capsule inbox": lambda repo: remember(
        repo, "keep this " * 300, topic=None, next_step=None, tags=(), now=NOW
    ),
    "return hand-off": lambda repo: write_handoff(
        GroupPaths(repo, "crp-1", "AUTH"), AgentRole.DEVELOPER, _developer()
    ),
    "hook settings": lambda repo: write_settings_text(
        repo / ".claude" / "settings.json", json.dumps({"hooks": {}, "pad": "x" * 6000})
    ),
}


@pytest.mark.parametrize("leave", [0, 2048, 6144])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_document_writer_on_a_full_disk_is_disk_full_and_recovers(
    disk: SmallDisk, writer: str, leave: int
) -> None:
    repo = disk.root / "repo"
    repo.mkdir()
    write = WRITERS[writer]
    write(repo)  # the folders and a first version exist
    before = _tree(repo)

    disk.fill(leave)
    refused: DiskFull | None = None
    try:
        write(repo)
    except DiskFull as exc:
        refused = exc
    disk.free()
    if refused is not None:
        assert str(disk.root) in refused.folder
        assert _tree(repo) == before  # nothing half-written, nothing left behind
    else:
        assert leave > 0, "a write into a full disk cannot succeed"

    write(repo)  # room again: the same write works
    assert not [p for p in repo.rglob("*.tmp")]
