"""Where a ``delegate capsule`` action works and how it prints: the repository, the
branch and the capsule file named (``latest`` or a path), its problems, and capsules,
documents and inbox entries as JSON or one line each.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from core.documents.problems import Problem
from core.errors import InvalidRequest
from core.models import ContextDocument
from core.orchestrator import AgentOrchestrator
from tui.cli.output import print_safe

LATEST = "latest"


def repo_of(args: argparse.Namespace) -> Path:
    """``--repo``, else the worktree holding the current folder, else the folder."""
    from core.gitinfo import worktree_root

    if args.repo:
        folder = Path(args.repo).expanduser()
        if not folder.is_dir():
            raise InvalidRequest(f"--repo {args.repo}: no such folder")
        return worktree_root(folder) or folder.resolve()
    here = Path.cwd()
    return worktree_root(here) or here


def branch_of(args: argparse.Namespace, repo: Path) -> str:
    """``--branch``, else the one checked out (the detached head's folder on none)."""
    from core.capsules.storage import DETACHED
    from core.gitinfo import current_branch

    return str(args.branch or current_branch(repo) or DETACHED)


async def capsule_file(repo: Path, spec: str, branch: str | None) -> tuple[Path, str]:
    """The capsule ``spec`` names (``latest`` or a path inside the repo) and its text."""
    from core.capsules.storage import read_capsule, resolve_capsule

    if spec != LATEST and not Path(spec).expanduser().is_absolute():
        # A shell's relative path is from the current folder (the core's: the repo root).
        spec = os.path.normpath(Path.cwd() / spec)
    path = await asyncio.to_thread(resolve_capsule, repo, spec, branch)
    return path, await asyncio.to_thread(read_capsule, path)


async def problems_of(orch: AgentOrchestrator, repo: Path, path: Path, text: str) -> list[Problem]:
    from core.capsules.check import check_capsule

    return await asyncio.to_thread(
        check_capsule, path, text, repo=repo, prompt_ceiling=orch.settings.capsule_max_tokens
    )


def problem_json(problem: Problem) -> dict[str, Any]:
    return dataclasses.asdict(problem)


def document_json(document: ContextDocument | None) -> dict[str, Any] | None:
    return document.model_dump(mode="json") if document is not None else None


def jsonable(value: Any) -> Any:
    """An inbox entry (a pydantic model or a dataclass) as JSON data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def print_problems(path: Path, problems: Sequence[Problem]) -> None:
    for problem in problems:
        print_safe(problem.located(str(path)))


def document_line(path: Path, document: ContextDocument | None) -> str:
    if document is None:
        return f"-         {'not registered':<16}  {'':<8}  {'':<6}  {path}"
    created = document.created_at.strftime("%Y-%m-%d %H:%M")
    return (
        f"{document.document_id[:8]}  {created}  {document.status.value:<8}  "
        f"{document.producer or '-':<6}  {path}"
    )
