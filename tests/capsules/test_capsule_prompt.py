"""The capsule prompt (the seed's ``make capsule_prompt``), with and without a stub."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.capsules.inbox import consume, remember
from core.capsules.markdown import parse_capsule
from core.capsules.model import MINI_SECTIONS, SECTIONS
from core.capsules.prompt import capsule_prompt
from core.capsules.storage import capsules_dir, list_capsules, read_capsule
from core.capsules.validate import validate_capsule
from core.errors import CapsulePathUnsafe, DocumentInvalid

WHEN = datetime(2026, 1, 21, 14, 30, 45, 123456, tzinfo=UTC)


def _repo(tmp_path: Path, branch: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", branch], cwd=repo, env=env, check=True)
    return repo


def _write(repo: Path, relative: str, text: str = "# notes\n") -> None:
    (repo / relative).parent.mkdir(parents=True, exist_ok=True)
    (repo / relative).write_text(text)


def test_the_prompt_names_branch_path_notebooks_inbox_budget_template_and_checklist(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, "feature/login")
    _write(repo, "docs/plans/feature-login.md")
    entry = remember(
        repo, "User prefers small PRs", topic="style", next_step="ask about CI", tags=(), now=WHEN
    )
    done = remember(repo, "Already handled", topic=None, next_step=None, tags=(), now=WHEN)
    consume(repo, [done.entry_id], into=repo / "x.md", now=WHEN, insert=False)

    prompt = capsule_prompt(
        repo, session="1a2b3c4d", file=None, stub=False, plan_slug=None, budget=None, now=WHEN
    )

    text = prompt.text
    assert prompt.branch == "feature/login"
    assert prompt.path == capsules_dir(repo) / "feature/login/20260121T143045Z.md"
    assert "- Branch: `feature/login`\n" in text
    assert "- Source session: `1a2b3c4d`\n" in text
    assert "- Capsule path: `.delegate/capsules/feature/login/20260121T143045Z.md`\n" in text
    assert "- Plan: `docs/plans/feature-login.md`\n" in text
    assert "- Progress notes: none found (looked for `docs/progress/feature-login.md`" in text
    assert f"[{entry.entry_id}] **style**: User prefers small PRs — next step: ask about CI" in text
    assert "1 outstanding" in text
    assert "Already handled" not in text  # consumed entries are not asked for again
    assert "1,200 tokens for the body" in text
    assert "4,000: 80% of the sub-agent's 5,000-token prompt ceiling" in text
    for title in SECTIONS:
        assert f"\n# {title}\n" in text
    assert "## Before you answer, check\n" in text
    assert "git status" in text
    assert text.endswith("no prose before or after it.\n")
    assert (
        text.index("## Template")
        < text.index("## Before you answer")
        < text.index("Answer with the completed capsule")
    )
    assert list_capsules(repo) == []  # no stub: nothing written


def test_the_stub_is_the_template_written_at_the_suggested_path_never_over_another(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, "main")
    first = capsule_prompt(
        repo, session="s1", file=None, stub=True, plan_slug=None, budget=None, now=WHEN
    )
    second = capsule_prompt(
        repo, session="s1", file=None, stub=True, plan_slug=None, budget=None, now=WHEN
    )
    assert first.stub_written
    assert first.path == capsules_dir(repo) / "main/20260121T143045Z.md"
    assert second.path.name == "20260121T143045Z-2.md"
    assert "- Capsule path: `.delegate/capsules/main/20260121T143045Z-2.md` (an empty" in (
        second.text
    )
    stub = read_capsule(first.path)
    capsule = parse_capsule(stub)
    assert capsule.front.branch == "main"
    assert capsule.front.source_session == "s1"
    assert capsule.front.created_at == WHEN.replace(microsecond=0)
    assert [s.title for s in capsule.sections] == list(SECTIONS)
    assert stub.strip() in first.text  # the template the prompt shows is the stub
    assert [p for p in validate_capsule(stub) if p.severity == "error"] == []


def test_a_named_file_and_plan_slug_and_a_mini_budget(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "work")
    _write(repo, "docs/plans/feature-context-capsule-refine.md")
    _write(repo, "docs/progress/feature-context-capsule-refine.md")
    prompt = capsule_prompt(
        repo,
        session=None,
        file=Path("notes/capsule.md"),
        stub=True,
        plan_slug="feature-context-capsule-refine",
        budget=None,
        now=WHEN,
        mini=True,
    )
    assert prompt.path == repo.resolve() / "notes/capsule.md"
    assert "- Plan: `docs/plans/feature-context-capsule-refine.md`\n" in prompt.text
    assert "- Progress notes: `docs/progress/feature-context-capsule-refine.md`\n" in prompt.text
    assert "300 tokens for the body" in prompt.text
    assert "source_session: unknown" in prompt.text
    capsule = parse_capsule(read_capsule(prompt.path))
    assert capsule.front.template == "mini"
    assert capsule.front.token_budget == 300
    assert [s.title for s in capsule.sections] == list(MINI_SECTIONS)


def test_a_file_outside_the_repository_or_over_another_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "main")
    with pytest.raises(CapsulePathUnsafe) as raised:
        capsule_prompt(
            repo,
            session=None,
            file=tmp_path / "elsewhere.md",
            stub=True,
            plan_slug=None,
            budget=None,
            now=WHEN,
        )
    assert raised.value.code == "capsule_path_unsafe"
    assert not (tmp_path / "elsewhere.md").exists()
    (repo / "out").symlink_to(tmp_path)
    with pytest.raises(CapsulePathUnsafe):
        capsule_prompt(
            repo,
            session=None,
            file=Path("out/x.md"),
            stub=True,
            plan_slug=None,
            budget=None,
            now=WHEN,
        )
    assert not (tmp_path / "x.md").exists()
    _write(repo, "mine.md", "my own text\n")
    with pytest.raises(DocumentInvalid, match="already exists"):
        capsule_prompt(
            repo,
            session=None,
            file=Path("mine.md"),
            stub=True,
            plan_slug=None,
            budget=None,
            now=WHEN,
        )
    assert (repo / "mine.md").read_text() == "my own text\n"


def test_a_budget_and_a_detached_head(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "main")
    (repo / ".git/HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    prompt = capsule_prompt(
        repo, session=None, file=None, stub=False, plan_slug=None, budget=800, now=WHEN
    )
    assert prompt.branch == "HEAD"
    assert "800 tokens for the body" in prompt.text
    assert "- Plan: none found (looked for `docs/plans/HEAD.md`" in prompt.text
