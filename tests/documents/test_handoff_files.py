"""Hand-off files: atomic, never overwritten, real folders only, archive and expiry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.documents.handoff_files import (
    PENDING_NOTE,
    archive_file,
    clear_pending_note,
    created_from_name,
    expired_archive_files,
    handoffs_dir,
    read_handoff_file,
    write_handoff_file,
    write_pending_note,
)
from core.errors import DocumentInvalid

WHEN = datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC)


def test_a_document_lands_under_its_creation_time_and_never_over_another(tmp_path: Path) -> None:
    first = write_handoff_file(tmp_path, "# one\n", WHEN)
    second = write_handoff_file(tmp_path, "# two\n", WHEN)
    assert first == tmp_path / ".delegate/handoffs/handoff-2026-01-21-143045.md"
    assert second.name == "handoff-2026-01-21-143045-2.md"
    assert first.read_text() == "# one\n"
    assert second.read_text() == "# two\n"
    assert sorted(p.name for p in handoffs_dir(tmp_path).iterdir()) == sorted(
        [first.name, second.name]
    )
    assert created_from_name(second) == WHEN


def test_a_symlinked_folder_is_refused_and_nothing_lands_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".delegate").symlink_to(outside)
    with pytest.raises(DocumentInvalid, match="symbolic link"):
        write_handoff_file(repo, "# x\n", WHEN)
    assert list(outside.iterdir()) == []


def test_an_interrupted_write_leaves_nothing_half_written(tmp_path: Path) -> None:
    # A real process whose files may not grow past 1 kB: the write fails half way.
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from datetime import datetime, UTC
        from pathlib import Path
        from core.documents.handoff_files import write_handoff_file
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        try:
            write_handoff_file(Path({str(tmp_path)!r}), "x" * 100_000, datetime.now(UTC))
        except OSError as exc:
            print("refused", exc.errno)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("refused"), done.stderr
    assert list(handoffs_dir(tmp_path).iterdir()) == []


def test_the_pending_note_names_the_document_and_the_command(tmp_path: Path) -> None:
    doc = write_handoff_file(tmp_path, "# one\n", WHEN)
    note = write_pending_note(tmp_path, doc, "delegate handoff continue X")
    assert note == doc.parent / PENDING_NOTE
    text = note.read_text()
    assert doc.name in text
    assert "delegate handoff continue X" in text
    clear_pending_note(tmp_path)
    assert not note.exists()
    clear_pending_note(tmp_path)  # already gone: fine


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    tmp_path = tmp_path / ".delegate" / "handoffs"
    tmp_path.mkdir(parents=True)
    fifo = tmp_path / "handoff.md"
    os.mkfifo(fifo)
    with pytest.raises(DocumentInvalid, match="not a regular file"):
        read_handoff_file(fifo)
    link = tmp_path / "link.md"
    target = tmp_path / "real.md"
    target.write_text("# real\n")
    link.symlink_to(target)
    with pytest.raises(DocumentInvalid):
        read_handoff_file(link)
    with pytest.raises(DocumentInvalid, match="no hand-off file"):
        read_handoff_file(tmp_path / "missing.md")
    assert read_handoff_file(target) == "# real\n"


def test_archived_documents_expire_by_the_time_their_name_carries(tmp_path: Path) -> None:
    old = write_handoff_file(tmp_path, "# old\n", WHEN - timedelta(days=100))
    new = write_handoff_file(tmp_path, "# new\n", WHEN)
    archived_old, archived_new = archive_file(old), archive_file(new)
    assert archived_old.parent.name == "archive"
    assert not old.exists()
    (archived_old.parent / "notes.md").write_text("a person's file")
    assert expired_archive_files(tmp_path, WHEN - timedelta(days=90)) == [archived_old]
    assert archived_new.exists()
