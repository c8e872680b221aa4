"""Shared by the hand-off tests: a real git repository and scripted agents that hand off."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support import write_config

from core.documents.handoff_template import HANDOFF_SECTIONS

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(root: Path) -> Path:
    """A repository on branch ``feature/auth`` with one change, one new file, one commit."""
    repo = root / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "feature/auth")
    (repo / "auth.py").write_text("def login():\n    return False\n")
    (repo / "README.md").write_text("# project\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "auth.py").write_text("def login():\n    return True\n\n\ndef logout():\n    pass\n")
    (repo / "tokens.py").write_text("SECRET_NAME = 'x'\n")
    return repo


def agent_document(task: str) -> str:
    """What a well-behaved agent replies when asked for its hand-off."""
    bodies = {name: f"- {name} as the agent knows it" for name in HANDOFF_SECTIONS}
    bodies["Current Task"] = task
    bodies["Progress Summary"] = (
        "### Completed\n- login\n\n### In Progress\n- logout\n\n### Pending\n- docs"
    )
    sections = "\n\n".join(f"## {name}\n\n{body}" for name, body in bodies.items())
    return f"Here you go.\n\n# Context Handoff\n\n{sections}\n"


def config_with_agents(data_dir: Path, *, auto_continue: bool = True) -> Path:
    """``writer`` writes its own hand-off; ``mute`` answers anything with an echo;
    ``broken`` fails to start a continuation; ``gated`` holds a continuation's first
    run until the file ``go`` appears in the data folder. Every agent reports 140k
    of 200k."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    writer = data_dir / "writer.toml"
    document = agent_document("Implementing the login flow.").replace("'''", "")
    writer.write_text(
        f"""
[[rules]]
match = "hands off to a new one"
reply = '''{document}'''
context_tokens = 140000
[[rules]]
match = "."
reply = "done: {{prompt}}"
context_tokens = 140000
""",
        encoding="utf-8",
    )
    broken = data_dir / "broken.toml"
    broken.write_text(
        """
[[rules]]
match = "continue the work of a previous session"
fail = "no tokens left on the account"
[[rules]]
match = "."
reply = "ok"
context_tokens = 140000
""",
        encoding="utf-8",
    )
    gated = data_dir / "gated.toml"
    gated.write_text(
        f"""
[[rules]]
match = "continue the work of a previous session"
reply = "reading the hand-off"
gate = "{data_dir / "go"}"
gate_after = 1
[[rules]]
match = "."
reply = "ok"
context_tokens = 140000
""",
        encoding="utf-8",
    )
    return write_config(
        data_dir,
        f"""
[agents.gated]
runner = "scripted"
script = "{gated}"
context_limit = 200000

[agents.writer]
runner = "scripted"
script = "{writer}"
context_limit = 200000

[agents.mute]
runner = "scripted"
context_limit = 200000

[agents.broken]
runner = "scripted"
script = "{broken}"
context_limit = 200000

[context]
auto_continue = {str(auto_continue).lower()}
""",
    )
