"""Helpers of the capsule editor tests: a git repository, the editor app, waiting on it."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from tui_support import fixed_clock, wait_until

from tui.capsules.app import CapsuleEditorApp, create_capsule_app
from tui.capsules.editor import CapsuleEditorScreen

FAST_CHECKS = 0.05


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def make_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A real git repository on branch ``feature/capsules`` with ``files`` committed."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "feature/capsules")
    git(folder, "config", "user.email", "t@example.com")
    git(folder, "config", "user.name", "Test")
    for name, text in (files or {"README.md": "hello\n"}).items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def editor_app(
    data_dir: Path,
    repo: Path,
    path: Path | None = None,
    session: str | None = None,
    **kwargs: Any,
) -> CapsuleEditorApp:
    options: dict[str, Any] = {
        "clock": fixed_clock,
        "check_delay": FAST_CHECKS,
        "cursor_blink": False,
    }
    return create_capsule_app(data_dir, repo, path, session, **(options | kwargs))


def editor(pilot: Pilot[Any]) -> CapsuleEditorScreen:
    for screen in pilot.app.screen_stack:
        if isinstance(screen, CapsuleEditorScreen):
            return screen
    raise AssertionError("the capsule editor is not open")


async def opened(pilot: Pilot[Any]) -> CapsuleEditorScreen:
    """Wait until the editor shows its text and its first check."""
    await wait_until(
        pilot,
        lambda: any(isinstance(s, CapsuleEditorScreen) for s in pilot.app.screen_stack),
        what="the capsule editor",
    )
    screen = editor(pilot)
    await wait_until(pilot, lambda: screen.checked_text is not None, what="the first check")
    return screen


async def checked(pilot: Pilot[Any]) -> CapsuleEditorScreen:
    """Wait until the checks have seen the text as it is now."""
    screen = editor(pilot)
    await wait_until(
        pilot, lambda: screen.checked_text == screen.text_area.text, what="the checks to catch up"
    )
    return screen


SESSION = "5e55a0c1-0000-4000-8000-000000000001"
DRAFTED_SNAPSHOT = "- **User intent:** a capsule editor driven from the keyboard"


def drafter_config(data_dir: Path) -> None:
    """A scripted ``drafter`` agent that answers a section request with a Mission
    Snapshot in a fence, and a whole-capsule request with a whole capsule."""
    script = data_dir / "drafter.toml"
    script.write_text(
        f'''
[[rules]]
match = "Draft the `# Mission Snapshot`"
reply = """Here it is:

```markdown
# Mission Snapshot
{DRAFTED_SNAPSHOT}
```
"""

[[rules]]
match = "."
reply = "I cannot help with that."
''',
        encoding="utf-8",
    )
    with (data_dir / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.drafter]\nrunner = "scripted"\nscript = "{script}"\npersona = "drafter"\n'
        )


async def insert_session(data_dir: Path, repo: Path) -> None:
    """A finished ``drafter`` session in ``repo`` with a few messages to quote."""
    from tui_support import insert_sessions, session_with

    await insert_sessions(
        data_dir,
        [
            session_with(
                SESSION,
                [
                    "Build the capsule editor with a live token meter",
                    "Decided: checks run in a worker thread, debounced",
                    "Keep the problems list jumpable",
                    "Done: the outline jumps between sections",
                ],
                title="Capsule editor",
                agent_id="drafter",
                cwd=str(repo),
            )
        ],
    )


async def until(
    pilot: Pilot[Any], condition: Callable[[], bool], seconds: float = 20.0, what: str = ""
) -> None:
    """Pump the app until ``condition()`` holds (no settling: a worker waiting on a
    picker or a diff stays pending while its modal is up)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)
