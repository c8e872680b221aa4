"""A role's agent may write its hand-off file without anyone to ask: ``claude -p`` is
started with a permission rule for the artifacts session's folder, and that folder only.

The real CLI obeys the rule in tests/e2e/test_readme_commands.py (a role's model writes
its hand-off with Claude Code's own Write tool, and a chain runs to BAZINGA).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_agent_argv import CLAUDE_OUT, World, world  # noqa: F401 - the fixture

from core.runners.claude_code import writable_rules


def test_a_role_launch_lets_claude_write_into_its_artifacts_session_only(
    world: World,  # noqa: F811
) -> None:
    repo = world.home / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    world.stream("claude", CLAUDE_OUT)
    world.delegate(
        "run",
        "--agent",
        "claude-code",
        "--cwd",
        str(repo),
        "--role",
        "developer",
        "--group",
        "AUTH",
        "implement JWT auth",
    )
    [argv] = world.argvs("claude")
    rules = [a for a in argv if a.startswith("--allowedTools=")]
    assert len(rules) == 1, argv
    folder = rules[0].removeprefix("--allowedTools=Edit(//").removesuffix("/**)")
    artifacts = (repo / ".delegate" / "artifacts").resolve()
    assert Path("/" + folder).parent == artifacts
    # the rule comes before the prompt's "--", so it is read as an option
    assert argv.index(rules[0]) < argv.index("--")


def test_a_plain_launch_gets_no_write_rule(world: World) -> None:  # noqa: F811
    world.stream("claude", CLAUDE_OUT)
    world.delegate("run", "--agent", "claude-code", "--cwd", str(world.home), "hello")
    [argv] = world.argvs("claude")
    assert not [a for a in argv if a.startswith("--allowedTools")]


def test_a_folder_whose_path_reads_as_a_pattern_gets_no_rule(tmp_path: Path) -> None:
    plain = tmp_path / "repo" / "artifacts"
    assert writable_rules([plain]) == [f"--allowedTools=Edit(//{str(plain).lstrip('/')}/**)"]
    for odd in ("a*b", "a b", "a,b", "x(y)", "q?", "[ab]", "{a,b}"):
        assert writable_rules([tmp_path / odd / "artifacts"]) == [], odd
