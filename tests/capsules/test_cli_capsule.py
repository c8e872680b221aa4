"""``delegate capsule ...`` through the real console script, on a real git repository."""

from __future__ import annotations

import os
from pathlib import Path

from cli_support import BRANCH, capsule_config, capsule_text, cli, git, make_repo
from support import json_out, run_cli, write_config

from core.capsules.storage import capsules_dir


def _write(repo: Path, name: str, text: str) -> Path:
    folder = capsules_dir(repo) / BRANCH
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_new_writes_a_registered_draft_and_mini_its_short_template(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)

    made = cli(tmp_path, data, "capsule", "new", "--repo", str(repo), "--json")
    path = Path(made["path"])
    assert path.parent == capsules_dir(repo) / BRANCH
    assert made["document"]["status"] == "draft"
    assert made["document"]["producer"] == "person"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    assert f"branch: {BRANCH}" in text
    assert "# Exploratory Threads & User Preferences" in text
    # A template is empty of content, but its envelope is whole but for the objective
    # nobody gave (no session: "unknown").
    checked = cli(
        tmp_path, data, "capsule", "check", made["path"], "--repo", str(repo), "--json", code=1
    )
    front = [p for p in checked["capsules"][0]["problems"] if p["code"].startswith("front")]
    assert [p["message"].split()[0] for p in front] == ["primary_objective"]

    # No --repo: the repository holding the current folder (here: a folder inside it).
    (repo / "src").mkdir()
    mini = cli(tmp_path, data, "capsule", "new", "--mini", "--json", cwd=repo / "src")
    mini_text = Path(mini["path"]).read_text(encoding="utf-8")
    assert mini["template"] == "mini"
    assert "token_budget: 300" in mini_text
    assert "# Transcript Highlights" not in mini_text

    listed = cli(tmp_path, data, "capsule", "list", "--repo", str(repo), "--json")
    assert [c["path"] for c in listed["capsules"]] == [mini["path"], made["path"]]
    assert all(c["document"]["status"] == "draft" for c in listed["capsules"])
    history = cli(tmp_path, data, "history", "--json")
    assert [e["kind"] for e in history].count("capsule_saved") == 2


def test_check_passes_a_good_capsule_and_prints_each_problem_with_its_line(
    tmp_path: Path,
) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    good = _write(repo, "20261123T210000Z.md", capsule_text())
    # A relative path is from the current folder, as a shell completes it.
    (repo / "src").mkdir()
    relative = os.path.relpath(good, repo / "src")
    ok = run_cli("--data-dir", str(data), "capsule", "check", relative, home=repo / "src")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout == ""

    bad_text = capsule_text().replace("# Risks & Watchpoints\n", "# Risks\n")
    bad_text += "\nDB_PASSWORD=hunter2hunter2\n"
    bad = _write(repo, "20261123T220000Z.md", bad_text)
    result = run_cli("--data-dir", str(data), "capsule", "check", "latest", home=repo)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    secret_line = bad_text.splitlines().index("DB_PASSWORD=hunter2hunter2") + 1
    assert f"{bad}:{secret_line}: secret_secret_assignment: " in result.stdout
    assert any(line.startswith(f"{bad}:") and ": section_missing: " in line for line in lines)
    assert all(line.startswith(f"{bad}:") for line in lines)

    as_json = cli(
        tmp_path, data, "capsule", "check", str(bad), "--repo", str(repo), "--json", code=1
    )
    [report] = as_json["capsules"]
    assert as_json["status"] == "problems"
    assert {"line": secret_line, "code": "secret_secret_assignment"}.items() <= next(
        p for p in report["problems"] if p["code"].startswith("secret_")
    ).items()


def test_check_redact_replaces_the_secret_in_the_file(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    path = _write(repo, "20261123T210000Z.md", capsule_text(extra="\n- DB_PASSWORD=hunter2hunter2"))
    out = cli(tmp_path, data, "capsule", "check", "--redact", "--repo", str(repo), "--json")
    assert out["status"] == "ok"
    assert out["capsules"][0]["redacted"] is True
    text = path.read_text(encoding="utf-8")
    assert "hunter2" not in text
    assert "DB_PASSWORD=[REDACTED]" in text


def test_show_names_the_capsule_and_an_unknown_one_is_a_typed_error(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    path = _write(repo, "20261123T210000Z.md", capsule_text())
    shown = cli(tmp_path, data, "capsule", "show", "--repo", str(repo), "--json")
    assert shown["path"] == str(path)
    assert shown["text"] == capsule_text()
    assert shown["problems"] == []
    assert shown["document"] is None  # written by hand, never registered

    missing = run_cli(
        "--data-dir", str(data), "capsule", "show", "nope.md", "--repo", str(repo), home=tmp_path
    )
    assert missing.returncode == 1
    assert missing.stderr.startswith("delegate: capsule_not_found: ")
    assert "Traceback" not in missing.stderr


def test_remember_then_consume_into_a_capsule(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    capsule = _write(repo, "20261123T210000Z.md", capsule_text())
    first = cli(
        tmp_path, data, "capsule", "remember", "Outline onboarding UX spike", "--topic", "ux",
        "--next-step", "Review mockups", "--tag", "ux", "--repo", str(repo), "--json",
    )  # fmt: skip
    cli(tmp_path, data, "capsule", "remember", "Try uv workspaces", "--repo", str(repo), "--json")
    inbox = cli(tmp_path, data, "capsule", "inbox", "--repo", str(repo), "--json")
    assert [e["reminder"] for e in inbox["entries"]] == [
        "Outline onboarding UX spike",
        "Try uv workspaces",
    ]
    entry_id = first["entry"]["entry_id"]
    consumed = cli(
        tmp_path, data, "capsule", "inbox", "--consume", entry_id, "--into", "latest",
        "--repo", str(repo), "--json",
    )  # fmt: skip
    assert consumed["consumed_into"] == str(capsule)
    assert [e["reminder"] for e in consumed["entries"]] == ["Try uv workspaces"]
    everything = cli(tmp_path, data, "capsule", "inbox", "--all", "--repo", str(repo), "--json")
    assert len(everything["entries"]) == 2


def test_prune_deletes_capsules_older_than_the_days_given(tmp_path: Path) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    old = _write(repo, "20200101T000000Z.md", capsule_text())
    made = cli(tmp_path, data, "capsule", "new", "--repo", str(repo), "--json")
    pruned = cli(
        tmp_path, data, "capsule", "prune", "--older-than", "30", "--repo", str(repo), "--json"
    )
    assert pruned["deleted"] == [str(old)]
    assert not old.exists()
    assert Path(made["path"]).exists()


def test_prompt_names_the_branch_and_the_session(tmp_path: Path) -> None:
    data = capsule_config(tmp_path / "data", capsule_text())
    repo = make_repo(tmp_path)
    out = cli(tmp_path, data, "run", "--agent", "capsuler", "--cwd", str(repo), "--json", "go")
    cid = out["conversation_id"]
    prompt = cli(
        tmp_path, data, "capsule", "prompt", "--session", cid, "--repo", str(repo), "--json"
    )
    assert BRANCH in prompt["text"]
    assert cid in prompt["text"]
    people = run_cli(
        "--data-dir", str(data), "capsule", "prompt", "--repo", str(repo), home=tmp_path
    )
    assert people.returncode == 0
    assert BRANCH in people.stdout


def test_request_saves_the_agents_capsule_as_a_registered_draft(tmp_path: Path) -> None:
    named = capsule_text().replace(
        "version: 0.1\n", "version: 0.1\nreferences:\n  - path: auth.py\n"
    )
    data = capsule_config(tmp_path / "data", "Here it is:\n\n```markdown\n" + named + "```\n")
    repo = make_repo(tmp_path)
    cid = cli(tmp_path, data, "run", "--agent", "capsuler", "--cwd", str(repo), "--json", "go")[
        "conversation_id"
    ]
    draft = cli(tmp_path, data, "capsule", "request", cid[:8], "--json")
    path = Path(draft["path"])
    assert path.parent == capsules_dir(repo) / BRANCH
    # The agent named the file; delegate recorded its blob id as git knows it.
    blob = git(repo, "hash-object", "auth.py").strip()
    saved_text = path.read_text(encoding="utf-8")
    assert f"  - path: auth.py\n    blob: {blob}\n" in saved_text
    assert saved_text.endswith(capsule_text().split("---\n", 2)[2])
    assert draft["problems"] == []

    listed = cli(tmp_path, data, "capsule", "list", "--repo", str(repo), "--json")
    [entry] = listed["capsules"]
    assert entry["document"]["document_id"] == draft["document_id"]
    assert entry["document"]["status"] == "draft"
    assert entry["document"]["producer"] == "agent"
    assert entry["document"]["source_session"] == cid
    [saved] = [e for e in cli(tmp_path, data, "history", "--json") if e["kind"] == "capsule_saved"]
    assert saved["conversation_id"] == cid
    assert saved["draft"] is True
    # The prompt went in as a follow-up of the same session, through its runner.
    runs = cli(tmp_path, data, "sessions", "show", cid, "--last", "10", "--json")
    assert any("capsule" in m["content"].lower() for m in runs["messages"] if m["role"] == "user")


def test_request_without_a_capsule_in_the_answer_saves_nothing(tmp_path: Path) -> None:
    data = capsule_config(tmp_path / "data", capsule_text())
    repo = make_repo(tmp_path)
    cid = cli(tmp_path, data, "run", "--agent", "mute", "--cwd", str(repo), "--json", "go")[
        "conversation_id"
    ]
    result = run_cli("--data-dir", str(data), "capsule", "request", cid, home=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("delegate: capsule_request_failed: ")
    assert not capsules_dir(repo).exists() or not any(capsules_dir(repo).rglob("*.md"))
    as_json = run_cli("--data-dir", str(data), "capsule", "request", cid, "--json", home=tmp_path)
    assert json_out(as_json)["error"]["code"] == "capsule_request_failed"


def test_edit_of_a_capsule_that_is_not_there_is_one_line_before_any_screen(
    tmp_path: Path,
) -> None:
    data = write_config(tmp_path / "data")
    repo = make_repo(tmp_path)
    result = run_cli(
        "--data-dir", str(data), "capsule", "edit", "latest", "--repo", str(repo), home=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr.startswith("delegate: capsule_not_found: ")
    assert result.stdout == ""


def test_request_mini_asks_for_the_short_outline(tmp_path: Path) -> None:
    mini = (
        capsule_text()
        .split("# Key Decisions")[0]
        .replace("token_budget: 1200\n", "token_budget: 300\ntemplate: mini\n")
    )
    mini += "# Pending Actions\n- [ ] Logout.\n\n# Knowledge Base\n- `auth.py`.\n"
    data = capsule_config(tmp_path / "data", mini)
    repo = make_repo(tmp_path)
    cid = cli(tmp_path, data, "run", "--agent", "capsuler", "--cwd", str(repo), "--json", "go")[
        "conversation_id"
    ]
    draft = cli(tmp_path, data, "capsule", "request", cid, "--mini", "--json")
    assert draft["problems"] == []
    shown = cli(tmp_path, data, "sessions", "show", cid, "--last", "10", "--json")
    [asked] = [m["content"] for m in shown["messages"] if "miniature" in m["content"]]
    assert "template: mini" in asked
    assert "# Exploratory Threads" not in asked
    people = run_cli("--data-dir", str(data), "capsule", "check", draft["path"], home=repo)
    assert people.returncode == 0, people.stdout


def test_request_that_takes_too_long_is_stopped_and_saves_nothing(tmp_path: Path) -> None:
    data = capsule_config(tmp_path / "data", capsule_text())
    repo = make_repo(tmp_path)
    cid = cli(tmp_path, data, "run", "--agent", "held", "--cwd", str(repo), "--json", "go")[
        "conversation_id"
    ]
    result = run_cli(
        "--data-dir", str(data), "capsule", "request", cid, "--timeout", "0.5", home=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr.startswith("delegate: capsule_request_failed: ")
    assert "within 0.5 seconds" in result.stderr
    assert not capsules_dir(repo).exists() or not any(capsules_dir(repo).rglob("*.md"))
    # The run was stopped: the session takes a follow-up again.
    again = cli(tmp_path, data, "run", "--session", cid, "--json", "and now?")
    assert again["status"] == "ok"
