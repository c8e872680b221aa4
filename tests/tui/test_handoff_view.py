"""What the hand-off viewer reads: a regular JSON file inside its artifacts session's
folder, at most a capped size; anything else says why it is not shown."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.returns.model import AgentRole
from tui.returns.panel import read_handoff_view, shown_path

SESSION = "crp-20261121-204500-3fa9"


def handoffs(repo: Path) -> Path:
    folder = repo / ".delegate" / "artifacts" / SESSION / "AUTH" / "handoffs"
    folder.mkdir(parents=True)
    return folder


def test_a_valid_file_is_shown_pretty_printed(tmp_path: Path) -> None:
    file = handoffs(tmp_path) / "handoff_developer.json"
    file.write_text(
        json.dumps({"from_agent": "developer", "status": "READY_FOR_QA", "summary": "x"})
    )
    view = read_handoff_view(str(file), AgentRole.DEVELOPER)
    assert view.problem is None
    assert view.invalid is None
    assert view.text == (
        '{\n  "from_agent": "developer",\n  "status": "READY_FOR_QA",\n  "summary": "x"\n}'
    )


def test_a_file_of_the_wrong_schema_is_shown_with_what_is_wrong(tmp_path: Path) -> None:
    file = handoffs(tmp_path) / "handoff_qa_expert.json"
    file.write_text(json.dumps({"from_agent": "qa_expert", "status": "READY_FOR_QA"}))
    view = read_handoff_view(str(file), AgentRole.QA_EXPERT)
    assert view.text is not None
    assert view.invalid is not None
    assert "handoff_qa_expert.json is not a valid qa_expert hand-off file" in view.invalid


def test_missing_not_json_not_an_object_too_big(tmp_path: Path) -> None:
    folder = handoffs(tmp_path)
    assert "no hand-off file at" in (read_handoff_view(str(folder / "gone.json")).problem or "")
    (folder / "prose.json").write_text("Implemented it all, see above")
    assert "is not JSON" in (read_handoff_view(str(folder / "prose.json")).problem or "")
    (folder / "list.json").write_text("[1, 2]")
    assert "not an object" in (read_handoff_view(str(folder / "list.json")).problem or "")
    (folder / "big.json").write_text(json.dumps({"x": "y" * 2_000}))
    problem = read_handoff_view(str(folder / "big.json"), max_bytes=1_000).problem or ""
    assert "at most 1,000 bytes" in problem


def test_links_and_other_files_are_not_followed(tmp_path: Path) -> None:
    folder = handoffs(tmp_path / "repo")
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "s3cret"}')
    (folder / "handoff_developer.json").symlink_to(secret)
    view = read_handoff_view(str(folder / "handoff_developer.json"))
    assert view.text is None
    assert "is a symbolic link" in (view.problem or "")
    assert "s3cret" not in str(view)
    # A folder of the session that is a link to elsewhere: refused before opening.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "handoff_qa_expert.json").write_text('{"token": "s3cret"}')
    (folder.parent.parent / "LINKED").symlink_to(outside)
    view = read_handoff_view(str(folder.parent.parent / "LINKED" / "handoff_qa_expert.json"))
    assert "leads out of" in (view.problem or "")
    # A FIFO would block a reader forever: not a regular file.
    os.mkfifo(folder / "handoff_tech_lead.json")
    assert "not a regular file" in (
        read_handoff_view(str(folder / "handoff_tech_lead.json")).problem or ""
    )
    # Outside any artifacts session, or climbing out of one: not opened at all.
    assert "not inside an artifacts session" in (read_handoff_view(str(secret)).problem or "")
    climbing = str(folder / ".." / ".." / ".." / ".." / ".." / ".." / "secret.json")
    assert "not inside an artifacts session" in (read_handoff_view(climbing).problem or "")
    assert "s3cret" not in str(read_handoff_view(climbing))


def test_shown_path_is_the_place_inside_the_session() -> None:
    path = f"/home/dev/src/app/.delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_developer.json"
    assert shown_path(path) == "AUTH/handoffs/handoff_developer.json"
    assert shown_path("/elsewhere/handoff.json") == "/elsewhere/handoff.json"


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.lists(
            st.sampled_from(
                ["..", ".", "", ".delegate", "artifacts", SESSION, "\x00", "a/b", "-x"]
            ),
            max_size=12,
        ).map(lambda parts: "/" + "/".join(parts)),
    )
)
def test_any_stored_path_gives_a_view_never_an_exception(path: str) -> None:
    view = read_handoff_view(path, AgentRole.DEVELOPER)
    assert (view.text is None) != (view.problem is None)
