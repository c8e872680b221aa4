"""Artifact paths: seed 002's layout, ids that never leave the artifacts folder."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ArtifactIdUnsafe, DocumentInvalid
from core.returns.model import AgentRole
from core.returns.paths import (
    MAX_ID_CHARS,
    GroupPaths,
    check_artifact_id,
    ensure,
    group_paths,
    new_artifacts_session,
)

WHEN = datetime(2026, 11, 27, 6, 15, 2, tzinfo=UTC)


def test_the_layout_is_the_seeds(tmp_path: Path) -> None:
    paths = GroupPaths(tmp_path, "crp-1", "AUTH")
    root = tmp_path / ".delegate/artifacts/crp-1"
    assert paths.session_dir == root
    assert paths.group_dir == root / "AUTH"
    assert paths.handoffs_dir == root / "AUTH/handoffs"
    assert paths.handoff_file(AgentRole.QA_EXPERT) == root / "AUTH/handoffs/handoff_qa_expert.json"
    assert paths.reasoning_dir == root / "reasoning"
    assert paths.tests_dir == root / "tests"
    assert paths.reviews_dir == root / "reviews"
    assert paths.investigations_dir == root / "investigations"
    assert (
        paths.relative(paths.handoff_file(AgentRole.DEVELOPER))
        == ".delegate/artifacts/crp-1/AUTH/handoffs/handoff_developer.json"
    )


def test_ensure_creates_every_folder_once_and_again(tmp_path: Path) -> None:
    paths = ensure(GroupPaths(tmp_path, "crp-1", "AUTH"))
    ensure(paths)  # twice is fine
    for folder in (
        paths.handoffs_dir,
        paths.reasoning_dir,
        paths.tests_dir,
        paths.reviews_dir,
        paths.investigations_dir,
    ):
        assert folder.is_dir()
        assert not folder.is_symlink()


def test_ensure_refuses_a_symlinked_folder_on_the_way(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    (repo / ".delegate/artifacts/crp-1").mkdir(parents=True)
    (repo / ".delegate/artifacts/crp-1/AUTH").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DocumentInvalid, match="symbolic link"):
        ensure(GroupPaths(repo, "crp-1", "AUTH"))
    assert list(outside.iterdir()) == []


def test_the_repository_is_the_worktree_root_else_the_folder(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert group_paths(plain, "s", "g").repo == plain
    repo = tmp_path / "repo"
    (repo / "src/deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert group_paths(repo / "src/deep", "s", "g").repo == repo.resolve()


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "..",
        ".",
        "../x",
        "x/../y",
        "a/b",
        "a\\b",
        "/etc",
        "C:\\x",
        "nul\0byte",
        "-rf",
        "--group",
        ".hidden",
        "trailing.",
        "with space",
        "tab\tx",
        "new\nline",
        "x" * (MAX_ID_CHARS + 1),
        "АUTH",  # a Cyrillic A
        "AUTＨ",  # a full-width H
        "café",
        "con",
        "NUL.txt",
        "lpt1",
    ],
)
def test_unsafe_ids_are_refused_with_a_message_naming_them(bad: str) -> None:
    with pytest.raises(ArtifactIdUnsafe) as caught:
        check_artifact_id(bad, "group id")
    assert caught.value.code == "artifact_id_unsafe"
    assert "group id" in str(caught.value)
    with pytest.raises(ArtifactIdUnsafe):
        GroupPaths(Path("/repo"), "crp-1", bad)
    with pytest.raises(ArtifactIdUnsafe):
        group_paths(Path("/repo"), bad, "AUTH")


@pytest.mark.parametrize(
    "good", ["AUTH", "group-1", "g_2", "v1.2", "a", "0", "x" * MAX_ID_CHARS, "a..b"]
)
def test_plain_ids_are_kept_as_they_are(good: str) -> None:
    assert check_artifact_id(good, "group id") == good


HOSTILE = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from([*"./\\-_ aZ09~:\0\n", "..", "../", "АＨ", "\u200b"]), max_size=40
    ).map("".join),
)
"""Any text, and text made of the pieces a path escape is built from."""


@given(HOSTILE)
def test_a_checked_id_never_leaves_the_artifacts_folder(value: str) -> None:
    root = Path("/repo")
    try:
        paths = GroupPaths(root, "crp-1", check_artifact_id(value, "group id"))
    except ArtifactIdUnsafe:
        return
    folder = paths.group_dir
    assert os.path.normpath(folder) == str(folder)  # nothing a normaliser would fold
    assert folder.parent == paths.session_dir
    assert folder.name == value
    assert paths.handoff_file(AgentRole.DEVELOPER).parent.parent == folder
    assert not value.startswith("-")
    assert value.isascii()
    assert value.isprintable()


@given(HOSTILE, HOSTILE)
def test_two_accepted_ids_that_differ_name_two_folders(a: str, b: str) -> None:
    try:
        first = GroupPaths(Path("/repo"), "s", a).group_dir
        second = GroupPaths(Path("/repo"), "s", b).group_dir
    except ArtifactIdUnsafe:
        return
    assert (first == second) == (a == b)


def test_a_role_named_by_text_is_checked_too(tmp_path: Path) -> None:
    paths = GroupPaths(tmp_path, "s", "g")
    assert paths.handoff_file("dev").name == "handoff_dev.json"
    with pytest.raises(ArtifactIdUnsafe):
        paths.handoff_file("../../x")


def test_new_sessions_are_stamped_unique_and_safe() -> None:
    made = {new_artifacts_session(WHEN) for _ in range(2000)}
    assert len(made) == 2000
    for session in made:
        assert session.startswith("crp-20261127-061502-")
        assert check_artifact_id(session, "artifacts session") == session
