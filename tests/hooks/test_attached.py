"""The hooks a CLI opened through delegate gets: only those its settings do not run."""

from __future__ import annotations

import json
from pathlib import Path

from core import ids
from core.hooks.attached import hook_arguments, watchable
from core.hooks.install import CLAUDE_EVENTS, install
from core.reopen import ReopenPlan

SID = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def plan(claude_dir: Path) -> ReopenPlan:
    env = {"CLAUDE_CONFIG_DIR": str(claude_dir)}
    return ReopenPlan(SID, ids.CLAUDE_CODE, ("claude", "--resume", SID), claude_dir, env, "claude")


def given(arguments: tuple[str, ...]) -> list[str]:
    if not arguments:
        return []
    assert arguments[0] == "--settings"
    return list(json.loads(arguments[1])["hooks"])


def test_without_installed_hooks_all_of_them_ride_along(tmp_path: Path) -> None:
    assert given(hook_arguments(plan(tmp_path / "claude"), tmp_path / "data")) == list(
        CLAUDE_EVENTS
    )


def test_installed_for_this_data_folder_none_are_given_twice(tmp_path: Path) -> None:
    claude, data = tmp_path / "claude", tmp_path / "data"
    claude.mkdir()
    install(ids.CLAUDE_CODE, claude / "settings.json", data)
    assert hook_arguments(plan(claude), data) == ()


def test_an_older_install_gets_only_what_it_lacks(tmp_path: Path) -> None:
    claude, data = tmp_path / "claude", tmp_path / "data"
    claude.mkdir()
    install(ids.CLAUDE_CODE, claude / "settings.json", data)
    settings = json.loads((claude / "settings.json").read_text())
    del settings["hooks"]["UserPromptSubmit"]  # installed before that hook existed
    (claude / "settings.json").write_text(json.dumps(settings))
    assert given(hook_arguments(plan(claude), data)) == ["UserPromptSubmit"]


def test_hooks_for_another_data_folder_do_not_count(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.mkdir()
    install(ids.CLAUDE_CODE, claude / "settings.json", tmp_path / "elsewhere")
    assert given(hook_arguments(plan(claude), tmp_path / "data")) == list(CLAUDE_EVENTS)


def test_unusable_settings_are_left_alone_and_all_hooks_ride_along(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "settings.json").write_text("{not json")
    assert given(hook_arguments(plan(claude), tmp_path / "data")) == list(CLAUDE_EVENTS)
    assert (claude / "settings.json").read_text() == "{not json"


def test_a_resumed_session_is_watched_under_its_own_id(tmp_path: Path) -> None:
    resumed = plan(tmp_path)
    assert watchable(resumed) == resumed


def test_a_new_session_gets_an_id_minted_here_before_its_prompt(tmp_path: Path) -> None:
    start = ReopenPlan(SID, ids.CLAUDE_CODE, ("claude", "Read the hand-off"), tmp_path, {}, "c")
    watched = watchable(start)
    assert watched.conversation_id != SID
    assert watched.argv == ("claude", "--session-id", watched.conversation_id, "Read the hand-off")
    assert ids.is_uuid(watched.conversation_id)


def test_a_start_whose_id_was_chosen_keeps_it_and_is_watched_under_it(tmp_path: Path) -> None:
    """A hand-off opened with ctrl+k starts under the id its adoption waits for: one
    ``--session-id``, and that session is the one watched."""
    chosen = "0f0e0d0c-0b0a-4909-8807-060504030201"
    start = ReopenPlan(
        SID, ids.CLAUDE_CODE, ("claude", "--session-id", chosen, "Read it"), tmp_path, {}, "c"
    )
    watched = watchable(start)
    assert watched.argv.count("--session-id") == 1
    assert watched.conversation_id == chosen
