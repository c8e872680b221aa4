"""Which ``[context]`` settings apply to a session, and the levels a figure reaches."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.config import ContextSettings, Settings, load_settings
from core.context.thresholds import effective_context, level_of, levels_crossed
from core.errors import InvalidConfig
from core.models import ContextLevel


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _project_config(repo: Path, text: str) -> Path:
    folder = repo / ".delegate"
    folder.mkdir(exist_ok=True)
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _data_settings(tmp_path: Path, text: str) -> Settings:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "config.toml").write_text(text, encoding="utf-8")
    return load_settings(data)


def test_without_a_project_file_the_data_folder_s_settings_apply(tmp_path: Path) -> None:
    settings = _data_settings(tmp_path, "[context]\nhandoff = 75\n")
    repo = _repo(tmp_path)
    assert effective_context(settings, repo / "src") == settings.context
    assert effective_context(settings, repo / "src").handoff == 75


def test_a_project_overrides_the_keys_it_sets_from_any_folder_of_its_worktree(
    tmp_path: Path,
) -> None:
    settings = _data_settings(
        tmp_path,
        '[context]\nhandoff = 75\nretention_days = 30\nwindows = { "gpt-x" = 64000 }\n',
    )
    repo = _repo(tmp_path)
    _project_config(
        repo,
        "[context]\nnotify_user_at = 40\nreminder = 50\nhandoff = 60\nauto_continue = false\n"
        'windows = { "local-" = 8000 }\n',
    )
    ctx = effective_context(settings, repo / "src" / "deep")
    assert (ctx.notify_user_at, ctx.reminder, ctx.handoff, ctx.force) == (40, 50, 60, 90)
    assert ctx.retention_days == 30  # not set by the project: the data folder's
    assert ctx.auto_continue is False
    assert ctx.windows == {"gpt-x": 64000, "local-": 8000}
    # A folder outside the project is not affected.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert effective_context(settings, elsewhere) == settings.context


def test_outside_a_repository_the_folder_s_own_delegate_settings_apply(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    _project_config(folder, "[context]\nenabled = false\n")
    assert effective_context(Settings(), folder).enabled is False


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[context]\nhandoff = 'soon'\n", "context.handoff"),
        ("[context]\nreminder = 75\n", "thresholds must rise"),
        ("[context]\nhandof = 65\n", "context.handof: unknown key"),
        ("[contxt]\nhandoff = 65\n", "contxt: unknown key"),
        ("context = 3\n", "context: must be a table"),
        ("[context\n", "not valid TOML"),
        ('[context]\nwindows = { "m" = 0 }\n', "positive token count"),
    ],
)
def test_a_broken_project_file_is_an_error_naming_the_file_and_the_key(
    tmp_path: Path, text: str, says: str
) -> None:
    repo = _repo(tmp_path)
    path = _project_config(repo, text)
    with pytest.raises(InvalidConfig) as caught:
        effective_context(Settings(), repo / "src")
    assert caught.value.code == "invalid_config"
    assert str(path) in caught.value.message
    assert says in caught.value.message


def test_only_a_regular_file_is_read_as_project_settings(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".delegate").mkdir()
    os.mkfifo(repo / ".delegate" / "config.toml")  # reading it would block forever
    with pytest.raises(InvalidConfig, match="not a regular file"):
        effective_context(Settings(), repo)


def test_a_project_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".delegate").mkdir()
    (repo / ".delegate" / "config.toml").write_bytes(b"[context]\nhandoff = 65 # \xff\n")
    with pytest.raises(InvalidConfig, match="not UTF-8"):
        effective_context(Settings(), repo)


def test_levels_are_reached_at_or_above_their_per_cent() -> None:
    ctx = ContextSettings()
    assert level_of(0, ctx) is ContextLevel.OK
    assert level_of(49.99, ctx) is ContextLevel.OK
    assert level_of(50, ctx) is ContextLevel.NOTIFY
    assert level_of(69.9, ctx) is ContextLevel.REMINDER
    assert level_of(70, ctx) is ContextLevel.HANDOFF
    assert level_of(90, ctx) is ContextLevel.FORCE
    assert level_of(130, ctx) is ContextLevel.FORCE
    assert levels_crossed(10, ctx) == []
    assert levels_crossed(75, ctx) == [
        ContextLevel.NOTIFY,
        ContextLevel.REMINDER,
        ContextLevel.HANDOFF,
    ]
    custom = ContextSettings(notify_user_at=20, reminder=30, handoff=40, force=45)
    assert levels_crossed(44, custom)[-1] is ContextLevel.HANDOFF
    assert level_of(45, custom) is ContextLevel.FORCE
