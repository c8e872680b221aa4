"""The remember-later inbox: remember, list, consume into a capsule (marked, not lost)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.capsules.inbox import consume, inbox_entries, inbox_path, remember
from core.capsules.storage import read_capsule, save_capsule
from core.errors import CapsulePathUnsafe, DocumentInvalid, InboxEntryUnknown, InvalidRequest

WHEN = datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC)
CAPSULE = """---
branch: main
---
# Mission Snapshot
- ship it

# Exploratory Threads & User Preferences
- an idea already here

"""


def test_remembered_entries_are_listed_with_every_field_in_a_readable_file(
    tmp_path: Path,
) -> None:
    first = remember(
        tmp_path,
        "Outline onboarding\nUX spike",
        topic="ux",
        next_step="Review mockups",
        tags=("ux", " onboarding ", ""),
        now=WHEN,
    )
    second = remember(
        tmp_path,
        "Prefers small commits",
        topic=None,
        next_step=None,
        tags=(),
        now=WHEN + timedelta(minutes=1),
    )
    entries = inbox_entries(tmp_path)
    assert entries == [first, second]
    assert first.reminder == "Outline onboarding UX spike"  # one line: no heading injected
    assert (first.topic, first.next_step, first.tags) == (
        "ux",
        "Review mockups",
        ("ux", "onboarding"),
    )
    assert first.created_at == WHEN
    assert (second.topic, second.next_step, second.tags) == (None, None, ())
    assert first.entry_id != second.entry_id
    text = inbox_path(tmp_path).read_text()
    assert "## 2026-01-21T14:30:45Z · ux\n" in text
    assert "- reminder: Outline onboarding UX spike\n" in text
    assert "- next step: Review mockups\n" in text
    assert "- tags: ux, onboarding\n" in text


def test_consuming_puts_the_entries_into_the_capsule_and_marks_them(tmp_path: Path) -> None:
    kept = remember(tmp_path, "Keep for later", topic=None, next_step=None, tags=(), now=WHEN)
    taken = remember(
        tmp_path, "Try the cache", topic="perf", next_step="measure p95", tags=("perf",), now=WHEN
    )
    capsule = save_capsule(tmp_path, CAPSULE, branch="main", created=WHEN)
    later = WHEN + timedelta(hours=1)

    done = consume(tmp_path, [taken.entry_id], into=capsule, now=later)

    assert [e.entry_id for e in done] == [taken.entry_id]
    assert done[0].consumed_at == later
    assert done[0].consumed_into == ".delegate/capsules/main/20260121T143045Z.md"
    assert inbox_entries(tmp_path) == [kept]  # outstanding only
    everything = inbox_entries(tmp_path, include_consumed=True)
    assert [e.entry_id for e in everything] == [kept.entry_id, taken.entry_id]
    assert everything[1].reminder == "Try the cache"  # not lost
    text = read_capsule(capsule)
    section = text.split("# Exploratory Threads & User Preferences\n")[1]
    assert section.startswith("- an idea already here\n- **perf**: Try the cache")
    assert "next step: measure p95" in section
    assert text.startswith(CAPSULE.split("# Exploratory")[0])  # the rest untouched
    with pytest.raises(InboxEntryUnknown) as raised:
        consume(tmp_path, [taken.entry_id], into=capsule, now=later)
    assert raised.value.code == "inbox_entry_unknown"


def test_consuming_without_insert_only_marks(tmp_path: Path) -> None:
    entry = remember(tmp_path, "Editor pulled this", topic=None, next_step=None, tags=(), now=WHEN)
    capsule = save_capsule(tmp_path, CAPSULE, branch="main", created=WHEN)
    consume(tmp_path, [entry.entry_id], into=capsule, now=WHEN, insert=False)
    assert read_capsule(capsule) == CAPSULE
    assert inbox_entries(tmp_path) == []


def test_a_capsule_without_the_section_gets_it_and_a_mini_one_its_pending_actions(
    tmp_path: Path,
) -> None:
    full = save_capsule(
        tmp_path, "---\nbranch: a\n---\n# Mission Snapshot\n- x\n", branch="a", created=WHEN
    )
    mini = save_capsule(
        tmp_path,
        "---\nbranch: b\ntemplate: mini\n---\n# Mission Snapshot\n- x\n\n# Pending Actions\n"
        "- [ ] y\n\n# Knowledge Base\n- z\n",
        branch="b",
        created=WHEN,
    )
    one = remember(tmp_path, "first", topic=None, next_step=None, tags=(), now=WHEN)
    two = remember(tmp_path, "second", topic=None, next_step=None, tags=(), now=WHEN)
    consume(tmp_path, [one.entry_id], into=full, now=WHEN)
    consume(tmp_path, [two.entry_id], into=mini, now=WHEN)
    assert read_capsule(full).endswith(
        "# Exploratory Threads & User Preferences\n- first (remembered 2026-01-21T14:30:45Z)\n"
    )
    assert "# Pending Actions\n- [ ] y\n- second (remembered" in read_capsule(mini)


def test_unknown_ids_change_nothing(tmp_path: Path) -> None:
    entry = remember(tmp_path, "x", topic=None, next_step=None, tags=(), now=WHEN)
    capsule = save_capsule(tmp_path, CAPSULE, branch="main", created=WHEN)
    before = inbox_path(tmp_path).read_text()
    with pytest.raises(InboxEntryUnknown, match="nope"):
        consume(tmp_path, [entry.entry_id, "nope"], into=capsule, now=WHEN)
    assert inbox_path(tmp_path).read_text() == before
    assert read_capsule(capsule) == CAPSULE


def test_an_empty_reminder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match="reminder"):
        remember(tmp_path, "  \n ", topic=None, next_step=None, tags=(), now=WHEN)
    assert inbox_entries(tmp_path) == []


def test_a_hand_edited_inbox_keeps_its_prose_and_entries_without_an_id(tmp_path: Path) -> None:
    path = inbox_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(
        "# Remember later\n\nMy own notes stay here.\n\n"
        "## 2026-01-20T08:00:00Z · by hand\n- reminder: written without delegate\n"
        "- a stray line\n"
    )
    entries = inbox_entries(tmp_path)
    assert [(e.topic, e.reminder) for e in entries] == [("by hand", "written without delegate")]
    capsule = save_capsule(tmp_path, CAPSULE, branch="main", created=WHEN)
    consume(tmp_path, [entries[0].entry_id], into=capsule, now=WHEN)
    text = path.read_text()
    assert "My own notes stay here.\n" in text
    assert "- a stray line\n" in text
    assert "- consumed: 2026-01-21T14:30:45Z into .delegate/capsules/main/" in text


def test_a_planted_inbox_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    repo = tmp_path / "repo"
    (repo / ".delegate/capsules").mkdir(parents=True)
    inbox_path(repo).symlink_to(outside)
    with pytest.raises(DocumentInvalid):
        remember(repo, "x", topic=None, next_step=None, tags=(), now=WHEN)
    assert outside.read_text() == "secret\n"


def test_two_processes_remembering_at_once_lose_nothing(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from datetime import datetime, UTC
        from pathlib import Path
        from core.capsules.inbox import remember
        for i in range(40):
            remember(Path({str(tmp_path)!r}), f"{{sys.argv[1]}}-{{i}}", topic=None,
                     next_step=None, tags=(), now=datetime.now(UTC))
        """
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", script, name], cwd=Path.cwd()) for name in "ab"
    ]
    assert [w.wait(timeout=60) for w in workers] == [0, 0]
    reminders = {e.reminder for e in inbox_entries(tmp_path)}
    assert reminders == {f"{name}-{i}" for name in "ab" for i in range(40)}


def test_consuming_into_a_file_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    entry = remember(repo, "x", topic=None, next_step=None, tags=(), now=WHEN)
    outside = tmp_path / "outside.md"
    outside.write_text(CAPSULE)
    with pytest.raises(CapsulePathUnsafe):
        consume(repo, [entry.entry_id], into=outside, now=WHEN)
    assert outside.read_text() == CAPSULE
    assert inbox_entries(repo) == [entry]
