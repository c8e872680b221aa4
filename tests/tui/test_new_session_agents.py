"""The new-session form lists the real agents whose CLIs are here first, as the default;
the scripted agents are listed after them as demo agents, and say so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from textual.widgets import Select
from tui_support import AppFactory, settle, started, write_config

from tui.modals.new_delegate import NewDelegate

STAND_IN = f"#!{sys.executable}\nprint('stand-in')\n"

pytestmark = pytest.mark.real_default_agent


@pytest.fixture
def only_claude_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH holds a stand-in ``claude`` and no ``codex``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(STAND_IN)
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)]))


async def open_form(app, pilot) -> NewDelegate:  # type: ignore[no-untyped-def]
    await started(pilot)
    await pilot.press("ctrl+n")
    await settle(pilot)
    assert isinstance(app.screen, NewDelegate)
    return app.screen


def options(form: NewDelegate) -> list[tuple[str, str]]:
    """(label, agent) as the form's agent choice lists them, top to bottom."""
    return [(choice.label, choice.agent_id) for choice in form.choices]


async def test_real_agents_on_path_come_first_and_are_the_default(
    tmp_path: Path, make_app: AppFactory, only_claude_on_path: None
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text('[agents.gated]\nrunner = "scripted"\n')
    app = make_app(data)
    async with app.run_test(size=(120, 36)) as pilot:
        form = await open_form(app, pilot)
        listed = options(form)
        assert listed[0][1] == "claude-code"
        assert form.query_one("#launch-agent", Select).value == "claude-code"
        labels = dict((value, label) for label, value in listed)
        for demo in ("echo", "reviewer", "gated"):
            assert "demo" in labels[demo], labels[demo]
        assert "demo" not in labels["claude-code"]
        # A real agent whose CLI is not here comes last and says why.
        assert listed[-1][1] == "codex"
        assert "not found" in labels["codex"]
        values = [value for _, value in listed]
        assert values.index("claude-code") < values.index("echo") < values.index("codex")


async def test_a_default_agent_set_in_the_config_stays_the_default(
    tmp_path: Path, make_app: AppFactory, only_claude_on_path: None
) -> None:
    data = write_config(tmp_path / "data", 'default_agent = "reviewer"')
    app = make_app(data)
    async with app.run_test(size=(120, 36)) as pilot:
        form = await open_form(app, pilot)
        assert form.query_one("#launch-agent", Select).value == "reviewer"
        assert options(form)[0][1] == "claude-code"
