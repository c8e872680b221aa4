"""``delegate history`` after a role's run: the return is printed, never a crash."""

from __future__ import annotations

from pathlib import Path

from support import run_cli
from tool_agents import make_repo, role_data_dir

DISPLAY = (
    "🔨 Group AUTH [Developer] | Implemented AUTH | Changed src/AUTH.py and tests"
    " | 15 tests pass → QA Expert"
)


def test_history_prints_an_accepted_return_in_every_layout(tmp_path: Path) -> None:
    data = role_data_dir(tmp_path)
    repo = make_repo(tmp_path)
    dev = run_cli("--data-dir", str(data), "run", "--cwd", str(repo), "--agent", "dev",
                  "--role", "developer", "--group", "AUTH", "Implement AUTH",
                  home=tmp_path)  # fmt: skip
    assert dev.returncode == 0, dev.stderr

    for flags, env in (
        ((), {}),
        (("--plain",), {"TTY_COMPATIBLE": "1"}),
        ((), {"TTY_COMPATIBLE": "1", "COLUMNS": "300"}),
    ):
        shown = run_cli("--data-dir", str(data), "history", *flags, home=tmp_path, env=env)
        assert shown.returncode == 0, (flags, env, shown.stderr)
        assert "Traceback" not in shown.stderr
        [accepted] = [line for line in shown.stdout.splitlines() if "return accepted" in line]
        assert "READY_FOR_QA" in accepted
        assert DISPLAY in accepted
