"""check_capsule: validation, secrets and drift together, sorted by line, in a real repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.capsules.check import check_capsule
from core.capsules.drift import reference_for
from core.capsules.model import SECTIONS
from core.documents.problems import Problem


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name in ("src/app.py", "src/db.py", "README.md"):
        (root / name).write_text(f"# {name}\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def capsule(references: str, body: dict[str, str] | None = None) -> str:
    """A full capsule with one line of content per section (``body`` replaces some)."""
    body = {"Transcript Highlights": "- 2026-11-23T21:02Z message 42: kept SQLite.", **(body or {})}
    sections = "".join(
        f"# {title}\n{body.get(title, '- ' + title.lower() + ' noted.')}\n\n" for title in SECTIONS
    )
    return (
        "---\n"
        "branch: main\n"
        "source_session: 1a2b3c4d\n"
        "created_at: 2026-11-23T21:35:21Z\n"
        "primary_objective: Finish the login flow\n"
        "token_budget: 1200\n"
        'version: "0.1"\n'
        f"{references}"
        "---\n"
        f"{sections}"
    )


def references_block(repo: Path, *paths: str) -> str:
    lines = ["references:\n"]
    for path in paths:
        reference = reference_for(repo, path)
        lines.append(f"  - path: {reference.path}\n")
        if reference.blob:
            lines.append(f"    blob: {reference.blob}\n")
    return "".join(lines)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


def own(problems: list[Problem]) -> list[tuple[int, str]]:
    """The (line, code) of the secret and drift problems (validation has its own tests)."""
    return [(p.line, p.code) for p in problems if p.code.startswith(("secret_", "reference_"))]


def test_a_fresh_capsule_has_no_problem(repo: Path) -> None:
    text = capsule(references_block(repo, "src/app.py", "README.md"))
    assert check_capsule(repo / "c.md", text, repo=repo) == []


def test_every_check_at_its_line_in_order(repo: Path) -> None:
    text = capsule(
        references_block(repo, "src/app.py", "src/db.py", "README.md"),
        {"Knowledge Base": "- the db is postgres://app:hunter2hunter@db/app"},
    )
    text = text.replace("# Risks & Watchpoints\n", "")  # a validation problem too
    (repo / "src" / "app.py").write_text("changed\n", encoding="utf-8")
    (repo / "src" / "db.py").write_text("committed\n", encoding="utf-8")
    git(repo, "commit", "-q", "-m", "db", "src/db.py")
    (repo / "README.md").unlink()

    problems = check_capsule(repo / "c.md", text, repo=repo)

    assert own(problems) == [
        (line_of(text, "path: src/app.py"), "reference_stale"),
        (line_of(text, "path: src/db.py"), "reference_stale"),
        (line_of(text, "path: README.md"), "reference_missing"),
        (line_of(text, "postgres://"), "secret_url_password"),
    ]
    assert "section_missing" in {p.code for p in problems}
    assert [p.line for p in problems] == sorted(p.line for p in problems)
    by_code = {p.line: p.message for p in problems}
    assert "uncommitted" in by_code[line_of(text, "path: src/app.py")]
    assert "commit on the branch" in by_code[line_of(text, "path: src/db.py")]
    assert "hunter2" not in " ".join(p.message for p in problems)


def test_the_repository_is_found_from_the_capsule_path(repo: Path) -> None:
    text = capsule(references_block(repo, "src/app.py"))
    (repo / "src" / "app.py").write_text("changed\n", encoding="utf-8")
    path = repo / ".delegate" / "capsules" / "main" / "20261123T213521Z.md"
    assert own(check_capsule(path, text, repo=None)) == [
        (line_of(text, "path: src/app.py"), "reference_stale")
    ]
    elsewhere = repo.parent / "elsewhere.md"
    assert own(check_capsule(elsewhere, text, repo=None)) == []


def test_a_reference_out_of_the_repository_is_reported_once_and_never_read(
    repo: Path,
) -> None:
    outside = repo.parent / "secret.txt"
    outside.write_text("x\n", encoding="utf-8")
    text = capsule("references:\n  - path: ../secret.txt\n    blob: " + "0" * 40 + "\n")
    problems = check_capsule(repo / "c.md", text, repo=repo)
    assert [(p.line, p.code) for p in problems] == [
        (line_of(text, "../secret.txt"), "front_matter_bad_value")
    ]


def test_text_without_front_matter_gets_validation_problems_only(repo: Path) -> None:
    text = "# Mission Snapshot\n- token sk-ant-api03-Zx9aBcDeFgHiJkLmNoPqRsTuVw\n"
    problems = check_capsule(repo / "c.md", text, repo=repo)
    assert (2, "secret_anthropic_key") in own(problems)
    assert any(p.code == "front_matter_missing" for p in problems)


def test_the_prompt_ceiling_is_passed_to_validation(repo: Path) -> None:
    long_body = {
        "Knowledge Base": "\n".join(f"- fact number {n} about the code" for n in range(80))
    }
    text = capsule("", long_body).replace("token_budget: 1200", "token_budget: 100000")
    assert "over_prompt_ceiling" not in {p.code for p in check_capsule(repo / "c.md", text)}
    low = check_capsule(repo / "c.md", text, prompt_ceiling=100)
    assert "over_prompt_ceiling" in {p.code for p in low}


def test_drift_lines_are_counted_at_newlines_only(repo: Path) -> None:
    text = capsule(references_block(repo, "src/app.py")).replace(
        "Finish the login flow", "Finish the login\u2028flow\x0c now"
    )
    (repo / "src" / "app.py").write_text("changed\n", encoding="utf-8")
    at = text.split("\n").index("  - path: src/app.py") + 1
    assert own(check_capsule(repo / "c.md", text, repo=repo)) == [(at, "reference_stale")]
