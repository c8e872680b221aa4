"""A hand-off is read only from inside a ``.delegate/handoffs/`` folder, whatever path names it.

``delegate handoff show`` and ``continue`` are given paths of every hostile shape
(system files, ``..`` out of a repository, symbolic links out, a ``.delegate`` that is a
link): each is a typed error naming the path, and nothing the file holds is printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from handoff_support import config_with_agents
from support import run_cli

SENTINEL = "SENTINEL-c0ffee-do-not-quote"


def hostile_paths(tmp_path: Path) -> dict[str, tuple[str, Path]]:
    """Shape -> (the path as given, the folder it is given from)."""
    secret = tmp_path / "secret.md"
    secret.write_text(f"# Hand-off\n{SENTINEL}\nroot:x:0:0\n", encoding="utf-8")
    repo = tmp_path / "repo"
    handoffs = repo / ".delegate" / "handoffs"
    handoffs.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(f"[core]\n\t# {SENTINEL}\n", encoding="utf-8")
    (handoffs / "link.md").symlink_to(secret)
    linked = tmp_path / "linked"
    (linked / ".delegate").mkdir(parents=True)
    (linked / ".delegate" / "handoffs").symlink_to(tmp_path)
    return {
        "etc_passwd": ("/etc/passwd", tmp_path),
        "proc_environ": ("/proc/self/environ", tmp_path),
        "a_file_elsewhere": (str(secret), tmp_path),
        "dotdot_git_config": ("../../.git/config", handoffs),
        "dotdot_out_of_handoffs": (str(handoffs / ".." / ".." / ".." / "secret.md"), tmp_path),
        "link_out": (str(handoffs / "link.md"), tmp_path),
        "linked_folder": (str(linked / ".delegate" / "handoffs" / "secret.md"), tmp_path),
        "relative_elsewhere": ("secret.md", tmp_path),
    }


@pytest.mark.parametrize("action", ["show", "continue"])
def test_no_hostile_path_is_read_or_quoted(tmp_path: Path, action: str) -> None:
    data = config_with_agents(tmp_path / "data")
    for shape, (given, where) in hostile_paths(tmp_path).items():
        result = run_cli("--data-dir", str(data), "handoff", action, given, "--json", home=where)
        said = result.stdout + result.stderr
        assert result.returncode == 1, (shape, said)
        assert SENTINEL not in said, shape
        assert "root:x:0:0" not in said, shape
        assert "Traceback" not in said, shape
        assert '"code": "document_path_unsafe"' in said, (shape, said)
