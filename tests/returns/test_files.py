"""Hand-off files on disk: checked, written whole, read only when they are regular files
in real folders — a link anywhere on the way is refused, never followed."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ArtifactIdUnsafe, HandoffFileInvalid
from core.returns.files import MAX_HANDOFF_BYTES, load_handoff, read_handoff, write_handoff
from core.returns.model import AgentRole
from core.returns.paths import GroupPaths

DEV = AgentRole.DEVELOPER


def developer(**extra: object) -> dict[str, object]:
    return {
        "from_agent": "developer",
        "to_agent": "qa_expert",
        "status": "READY_FOR_QA",
        "summary": "Implemented JWT auth with 3 endpoints, 15 tests passing",
        "files_modified": ["src/auth/jwt_handler.py"],
        "tests": {"total": 15, "passing": 15, "failing": 0, "coverage": "92%"},
        "artifacts": {"reasoning": "reasoning/developer_AUTH.md"},
        **extra,
    }


@pytest.fixture
def paths(tmp_path: Path) -> GroupPaths:
    repo = tmp_path / "repo"
    repo.mkdir()
    return GroupPaths(repo, "crp-1", "AUTH")


def test_a_written_file_reads_back_with_its_own_keys(paths: GroupPaths) -> None:
    path = write_handoff(paths, DEV, developer(note_of_my_own="kept"))
    assert path == paths.handoff_file(DEV)
    assert path.parent.is_dir()
    assert [p.name for p in path.parent.iterdir()] == ["handoff_developer.json"]  # no temp left
    handoff = read_handoff(paths, DEV)
    assert handoff.status == "READY_FOR_QA"
    assert handoff.from_agent is DEV
    assert (handoff.model_extra or {})["note_of_my_own"] == "kept"
    loaded = load_handoff(paths, DEV)
    assert loaded.text == path.read_text()
    assert json.loads(loaded.text) == developer(note_of_my_own="kept")


def test_json_text_is_accepted_and_rewritten_whole(paths: GroupPaths) -> None:
    write_handoff(paths, DEV, json.dumps(developer()))
    write_handoff(paths, DEV, developer(status="BLOCKED"))
    assert read_handoff(paths, DEV).status == "BLOCKED"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (developer(status="PASS"), "status"),
        (developer(from_agent="qa_expert"), "from_agent"),
        ({k: v for k, v in developer().items() if k != "summary"}, "summary"),
        ([1, 2], "one JSON object"),
        ("{not json", "not JSON"),
        (developer(tests={"total": "many"}), "tests"),
        (developer(score=float("nan")), "JSON values"),
    ],
)
def test_an_invalid_file_is_refused_before_anything_is_written(
    paths: GroupPaths, data: object, field: str
) -> None:
    with pytest.raises(HandoffFileInvalid, match=field) as caught:
        write_handoff(paths, DEV, data)
    assert caught.value.code == "handoff_file_invalid"
    assert not paths.handoff_file(DEV).exists()


def test_a_missing_file_says_where_it_was_looked_for(paths: GroupPaths) -> None:
    with pytest.raises(HandoffFileInvalid, match="no hand-off file"):
        read_handoff(paths, DEV)
    paths.handoffs_dir.mkdir(parents=True)
    with pytest.raises(HandoffFileInvalid, match=str(paths.handoff_file(DEV))):
        read_handoff(paths, DEV)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "not JSON"),
        ("[1", "not JSON"),
        ('{"a": NaN}', "not JSON"),
        ("[" * 100_000, "not JSON"),
        ('{"from_agent": "developer", "status": "NOPE", "summary": "x"}', "status"),
    ],
)
def test_a_bad_file_on_disk_is_named_with_its_problem(
    paths: GroupPaths, text: str, problem: str
) -> None:
    paths.handoffs_dir.mkdir(parents=True)
    paths.handoff_file(DEV).write_text(text)
    with pytest.raises(HandoffFileInvalid, match=problem) as caught:
        read_handoff(paths, DEV)
    assert "handoff_developer.json" in str(caught.value)


def test_binary_and_oversized_files_are_refused(paths: GroupPaths) -> None:
    paths.handoffs_dir.mkdir(parents=True)
    target = paths.handoff_file(DEV)
    target.write_bytes(b"\xff\xfe{}")
    with pytest.raises(HandoffFileInvalid, match="UTF-8"):
        read_handoff(paths, DEV)
    target.write_text(json.dumps(developer(padding="x" * MAX_HANDOFF_BYTES)))
    with pytest.raises(HandoffFileInvalid, match="at most"):
        read_handoff(paths, DEV)


def test_a_symlinked_file_pointing_outside_is_refused_on_read_and_replaced_on_write(
    paths: GroupPaths, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(developer()))
    paths.handoffs_dir.mkdir(parents=True)
    paths.handoff_file(DEV).symlink_to(secret)
    with pytest.raises(HandoffFileInvalid, match="symbolic link"):
        read_handoff(paths, DEV)
    write_handoff(paths, DEV, developer(status="BLOCKED"))
    assert not paths.handoff_file(DEV).is_symlink()  # the link was replaced as a name
    assert json.loads(secret.read_text())["status"] == "READY_FOR_QA"  # its target untouched


@pytest.mark.parametrize("level", [".delegate", "artifacts", "crp-1", "AUTH", "handoffs"])
def test_a_symlinked_folder_at_any_level_is_refused_never_followed(
    paths: GroupPaths, tmp_path: Path, level: str
) -> None:
    outside = tmp_path / "outside"
    parts = [".delegate", "artifacts", "crp-1", "AUTH", "handoffs"]
    below = parts[parts.index(level) + 1 :]
    # The outside folder holds a valid file exactly where the link would lead.
    (outside.joinpath(*below)).mkdir(parents=True)
    (outside.joinpath(*below) / "handoff_developer.json").write_text(json.dumps(developer()))
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    link = paths.repo.joinpath(*parts[: parts.index(level) + 1])
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    with pytest.raises(HandoffFileInvalid, match="symbolic link"):
        read_handoff(paths, DEV)
    with pytest.raises(HandoffFileInvalid, match="symbolic link"):
        write_handoff(paths, DEV, developer(status="BLOCKED"))
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before
    stored = json.loads((outside.joinpath(*below) / "handoff_developer.json").read_text())
    assert stored["status"] == "READY_FOR_QA"


def test_a_file_where_a_folder_should_be_is_refused(paths: GroupPaths) -> None:
    paths.group_dir.mkdir(parents=True)
    paths.handoffs_dir.write_text("not a folder")
    with pytest.raises(HandoffFileInvalid, match="not a folder"):
        write_handoff(paths, DEV, developer())
    with pytest.raises(HandoffFileInvalid, match="not a folder"):
        read_handoff(paths, DEV)


def test_a_fifo_is_never_opened_for_reading(paths: GroupPaths) -> None:
    paths.handoffs_dir.mkdir(parents=True)
    os.mkfifo(paths.handoff_file(DEV))
    # Opening a FIFO with no writer would block forever; a read returning at all is the test.
    with pytest.raises(HandoffFileInvalid, match="not a regular file"):
        read_handoff(paths, DEV)


def test_a_device_is_never_opened(paths: GroupPaths) -> None:
    paths.handoffs_dir.mkdir(parents=True)
    target = paths.handoff_file(DEV)
    try:  # a real device node (/dev/null's numbers) where the system lets us make one
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError):
        if not os.path.exists("/dev/null"):
            pytest.skip("neither a device node nor /dev/null here")
        os.symlink("/dev/null", target)
    with pytest.raises(HandoffFileInvalid, match="regular file"):
        read_handoff(paths, DEV)


def test_a_folder_at_the_files_name_is_refused(paths: GroupPaths) -> None:
    paths.handoff_file(DEV).mkdir(parents=True)
    with pytest.raises(HandoffFileInvalid, match="not a regular file"):
        read_handoff(paths, DEV)
    with pytest.raises(HandoffFileInvalid, match="is a folder"):
        write_handoff(paths, DEV, developer())


def test_a_reader_never_sees_half_a_file(paths: GroupPaths) -> None:
    big = [developer(status="READY_FOR_QA", padding="a" * 60_000), developer(status="BLOCKED")]
    write_handoff(paths, DEV, big[0])
    stop = threading.Event()
    problems: list[str] = []

    def writer() -> None:
        n = 0
        while not stop.is_set():
            write_handoff(paths, DEV, big[n % 2])
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        statuses = set()
        for _ in range(300):
            try:
                statuses.add(read_handoff(paths, DEV).status)
            except HandoffFileInvalid as exc:
                problems.append(str(exc))
    finally:
        stop.set()
        thread.join()
    assert problems == []
    assert statuses <= {"READY_FOR_QA", "BLOCKED"}
    assert [p.name for p in paths.handoffs_dir.iterdir()] == ["handoff_developer.json"]


def test_parallel_writers_of_different_groups_and_roles_each_keep_their_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    jobs = [
        (GroupPaths(repo, "crp-1", f"G{n % 8}"), role)
        for n in range(8)
        for role in (AgentRole.DEVELOPER, AgentRole.SENIOR_SOFTWARE_ENGINEER)
    ]

    def write(job: tuple[GroupPaths, AgentRole]) -> None:
        group, role = job
        write_handoff(group, role, developer(from_agent=role.value, group_id=group.group))

    threads = [threading.Thread(target=write, args=(job,)) for job in jobs * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for group, role in jobs:
        assert read_handoff(group, role).group_id == group.group


PIECES = st.lists(
    st.sampled_from(["..", "/", "\\", ".", "-", "a", "Z", "0", "_", "\0", " ", "Ａ"]), max_size=12
).map("".join)


@settings(max_examples=60, deadline=None)
@given(session=PIECES, group=PIECES)
def test_whatever_the_ids_a_write_lands_inside_the_artifacts_folder_or_nowhere(
    session: str, group: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        repo = root / "deep/repo"
        repo.mkdir(parents=True)
        try:
            paths = GroupPaths(repo, session, group)
        except ArtifactIdUnsafe:
            return
        written = write_handoff(paths, DEV, developer()).resolve()
        artifacts = (repo / ".delegate/artifacts").resolve()
        assert written.is_relative_to(artifacts / session / group / "handoffs")
        files = [p for p in root.rglob("*") if p.is_file()]
        assert files == [written]
