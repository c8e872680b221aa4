"""The panel's first frame imports only what it draws.

A real subprocess opens the panel (headless) over a store that already holds a
session, with the background import and the supervisor on as ``delegate`` runs
them, and records ``sys.modules`` at the first frame that shows rows. What that
frame does not need (the Markdown renderer, the tokenizer, gitpython, the import's
process pool, search, the MCP server, HTTP) must load later, if ever: each would
only delay the first rows. Behaviour, not timing: the figures are in
``tests/bench/bench_startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Modules (and every submodule of them) the first frame must not have imported.
NOT_BEFORE_FIRST_FRAME = (
    "tiktoken",  # token counts: only for runs and context estimates
    "git",  # gitpython
    "markdown_it",  # the Markdown renderer, as rich and textual use it
    "rich.markdown",
    "textual.widgets._markdown",
    "multiprocessing",  # the import's worker pool (and watchfiles' process support)
    "concurrent.futures.process",
    "core.search",  # search: the first frame lists without a query
    "mcp",
    "httpx",
    # What launches, follows up and judges runs: the orchestrator imports it on first use.
    "core.runners",  # the agents' runners (and the subprocess machinery)
    "core.detached",  # detached workers
    "core.live_activity",
    "core.capsules.launch",  # a capsule carried by a launch
    "core.capsules.registry",
    "core.capsules.model",
    "core.returns.launch",  # roles of a group, their prompts and hand-off schemas
    "core.returns.prompt",
    "core.returns.schemas",
    "core.documents.prompt",
    "core.context.counting",  # token counts and windows of a launch
    "core.context.windows",
    "core.tokens",
    # The store's repositories a listing does not use (made on first use).
    "core.store.archive",
    "core.store.bulk",
    "core.store.changes",
    "core.store.checkpoints",
    "core.store.context",
    "core.store.documents",
    "core.store.imports",
    "core.store.leases",
    "core.store.returns",
    "core.store.tombstones",
    # The picker's modals and panels: each opens on a key, never in the first frame.
    "tui.modals",
    "tui.capsules.panel",  # a capsule's editor and preview
    "tui.returns.panel",  # a group's hand-offs
    "core.capsules",
    "core.documents",
)

SESSION = "aaaaaaaa-0000-4000-8000-0000000000f1"

PROBE = r"""
import asyncio, gc, json, sys
from pathlib import Path

from tui.app import create_app
from tui.widgets.session_list import SessionList

data_dir, claude_dir, codex_dir = map(Path, sys.argv[1:4])
gc.disable()  # as `delegate` starts the panel: paused until the picker is shown
app = create_app(data_dir, import_sources=(claude_dir, codex_dir), resume_collector=True)
seen = {}
original = app._display  # every frame Textual shows goes through here


def display(screen, renderable):
    original(screen, renderable)
    if renderable is None or "first" in seen:
        return
    try:
        listed = app.screen.query_one(SessionList)
    except Exception:  # the picker is not mounted yet
        return
    if listed.sessions and listed.display:
        seen["first"] = sorted(sys.modules)


app._display = display


async def main():
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(2000):
            if "first" in seen:
                break
            await asyncio.sleep(0.01)
        # Until the start's work is done (an exclusive worker may cancel an earlier one:
        # waiting on each would raise for the cancelled).
        for _ in range(3000):
            if all(worker.is_finished for worker in app.workers):
                break
            await asyncio.sleep(0.01)
        await pilot.pause()
        seen["later"] = sorted(sys.modules)
        seen["collecting"] = gc.isenabled()


asyncio.run(main())
print(json.dumps(seen))
"""


def _transcript(session: str) -> str:
    def line(kind: str, n: int, message: dict[str, object]) -> str:
        return json.dumps(
            {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/work/app",
                "sessionId": session,
                "version": "2.1.42",
                "gitBranch": "main",
                "type": kind,
                "uuid": f"{session[:8]}-{n:06d}",
                "timestamp": f"2026-11-21T20:00:{n:02d}.000Z",
                "message": message,
            }
        )

    return (
        "\n".join(
            [
                line("user", 1, {"role": "user", "content": "# Plan\n\n- list the **files**"}),
                line(
                    "assistant",
                    2,
                    {
                        "id": "msg-1",
                        "model": "claude-sonnet-4-5",
                        "role": "assistant",
                        "type": "message",
                        "content": [{"type": "text", "text": "Done:\n\n```py\nprint(1)\n```"}],
                    },
                ),
            ]
        )
        + "\n"
    )


def _run(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_first_frame_imports_nothing_it_does_not_draw(tmp_path: Path) -> None:
    claude, codex, data = tmp_path / "claude", tmp_path / "codex", tmp_path / "data"
    project = claude / "projects" / "-work-app"
    project.mkdir(parents=True)
    codex.mkdir()
    (project / f"{SESSION}.jsonl").write_text(_transcript(SESSION))
    # A store that already holds the session: the panel's warm start.
    _run("-m", "tui.cli", "--data-dir", str(data), "import", "--claude-dir", str(claude),
         "--codex-dir", str(codex))  # fmt: skip

    seen = json.loads(_run("-c", PROBE, str(data), str(claude), str(codex)))

    assert "first" in seen, "no frame showed the imported session"
    early = [name for name in NOT_BEFORE_FIRST_FRAME if _loaded(seen["first"], name)]
    assert early == [], f"imported before the first frame with rows: {early}"
    # The deferred work did run, after that frame: the re-scan and the preview's Markdown.
    assert _loaded(seen["later"], "core.importing.importer")
    assert _loaded(seen["later"], "rich.markdown")
    # The garbage collector, paused for the start, is back on once the picker is shown.
    assert seen["collecting"]


def test_the_first_frame_s_pydantic_classes_have_evaluated_annotations() -> None:
    # Made before the first frame: with string annotations (`from __future__ import
    # annotations`) pydantic evaluates each one itself, about twice the cost per class.
    import pydantic

    import core.config
    import core.events
    import core.importing.report
    import core.models

    modules = {m.__name__ for m in (core.config, core.events, core.models, core.importing.report)}
    pending = list(pydantic.BaseModel.__subclasses__())
    strings = []
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__ in modules:
            own = vars(cls).get("__annotations__", {})
            strings += [
                f"{cls.__name__}.{name}" for name, kind in own.items() if isinstance(kind, str)
            ]
    assert strings == []
