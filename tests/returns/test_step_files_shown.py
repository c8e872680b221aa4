"""``delegate returns show`` names a step's hand-off file only when it is there.

A final step (the PM's ``BAZINGA``) needs no file and may write none; a file can
also be removed after its step. Either way the step says "no hand-off file" and no
path is printed or answered for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chain_agents import chain_config, git_repo, role_rule
from support import json_out, run_cli

SESSION = "crp-files-1"
PM_FILE = "handoff_project_manager.json"


def _chain_without_a_pm_file(tmp_path: Path) -> tuple[Path, Path]:
    data = chain_config(
        tmp_path / "data",
        {"project_manager": [role_rule("project_manager", "BAZINGA", write=False)]},
    )
    repo = git_repo(tmp_path / "repo")
    ran = run_cli("--data-dir", str(data), "run", "--cwd", str(repo), "--agent", "dev-bot",
                  "--role", "dev", "--group", "AUTH", "--chain", "--artifacts-session", SESSION,
                  "Implement AUTH", home=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1].startswith("🎉 Group AUTH [PM]")
    assert not (repo / f".delegate/artifacts/{SESSION}/AUTH/handoffs/{PM_FILE}").exists()
    return data, repo


def _show(data: Path, tmp_path: Path, *flags: str) -> Any:
    shown = run_cli("--data-dir", str(data), "returns", "show", SESSION, *flags, home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    return json_out(shown) if "--json" in flags else shown.stdout


def test_a_final_step_that_wrote_no_file_names_none(tmp_path: Path) -> None:
    data, _repo = _chain_without_a_pm_file(tmp_path)

    text = _show(data, tmp_path)
    assert PM_FILE not in text
    lines = text.splitlines()
    pm = next(i for i, line in enumerate(lines) if "[PM]" in line)
    assert lines[pm + 1].strip() == "no hand-off file"
    for role in ("developer", "qa_expert", "tech_lead"):  # the files that are there, named
        assert f"/AUTH/handoffs/handoff_{role}.json" in text

    [auth] = _show(data, tmp_path, "--json")["groups"]
    files = {step["agent_role"]: step["handoff_file"] for step in auth["steps"]}
    assert files.pop("project_manager") is None
    for role, named in files.items():
        assert Path(named).is_file(), role


def test_a_file_removed_since_its_step_is_named_no_more(tmp_path: Path) -> None:
    data, repo = _chain_without_a_pm_file(tmp_path)
    (repo / f".delegate/artifacts/{SESSION}/AUTH/handoffs/handoff_qa_expert.json").unlink()

    text = _show(data, tmp_path)
    assert "handoff_qa_expert.json" not in text
    lines = text.splitlines()
    qa = next(i for i, line in enumerate(lines) if "[QA]" in line)
    assert lines[qa + 1].strip() == "no hand-off file (removed since it was written)"

    [auth] = _show(data, tmp_path, "--json")["groups"]
    [qa_step] = [s for s in auth["steps"] if s["agent_role"] == "qa_expert"]
    assert qa_step["handoff_file"] is None
