"""Launching with a capsule: find it, check it, refuse it or make it ready to inject.

A launch names a capsule (``latest`` for the branch it runs on, or a path in the
repository). Before any session is recorded the capsule is read (a regular file only),
parsed and checked as ``delegate capsule check`` checks it; a capsule that breaks its
structure or budget is refused, one with secrets or stale references too unless the
person accepted that. What passes is registered (once per text) and handed back with
the body to inject and its digest.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from core.capsules.check import check_capsule
from core.capsules.markdown import CapsuleSyntaxError, parse_capsule, reader_body
from core.capsules.model import DEFAULT_PROMPT_CEILING
from core.capsules.registry import current_capsule_document, register_capsule
from core.capsules.storage import read_capsule, resolve_capsule
from core.documents.handoff_registry import digest
from core.documents.problems import Problem
from core.documents.prompt import InjectedCapsule
from core.errors import (
    CapsuleHasSecrets,
    CapsuleInvalid,
    DocumentInvalid,
    StaleCapsule,
)
from core.gitinfo import current_branch, worktree_root
from core.models import DocumentStatus
from core.store import Store

STALE_CODES = frozenset({"reference_stale", "reference_missing"})
"""Problems that mean the files a capsule describes changed since it was written."""


@dataclass(frozen=True, slots=True)
class CapsuleAcceptance:
    """What a person accepted for this launch: secrets in the capsule, stale references."""

    allow_secrets: bool = False
    accept_stale: bool = False


@dataclass(frozen=True, slots=True)
class PreparedCapsule:
    """A capsule checked for a launch: what to inject, and the problem codes a person
    accepted to launch with it anyway."""

    injected: InjectedCapsule
    accepted: tuple[str, ...] = ()


def _is_secret(problem: Problem) -> bool:
    return problem.code.startswith("secret_")


def _shown(path: Path, repo: Path) -> str:
    """``path`` relative to the repository when it is inside it (how check prints it)."""
    try:
        return str(path.relative_to(repo))
    except ValueError:
        return str(path)


def _refuse(shown: str, problems: list[Problem], acceptance: CapsuleAcceptance) -> tuple[str, ...]:
    """Raise for the first kind of problem the launch may not carry; else the codes accepted."""
    errors = [p for p in problems if p.severity == "error"]
    invalid = [p for p in errors if not _is_secret(p) and p.code not in STALE_CODES]
    secrets = [p for p in errors if _is_secret(p)]
    stale = [p for p in errors if p.code in STALE_CODES]
    if invalid:
        raise CapsuleInvalid(shown, invalid)
    if secrets and not acceptance.allow_secrets:
        raise CapsuleHasSecrets(shown, secrets)
    if stale and not acceptance.accept_stale:
        raise StaleCapsule(shown, stale)
    return tuple(dict.fromkeys(p.code for p in (*secrets, *stale)))


async def prepare_capsule(
    store: Store,
    cwd: Path,
    spec: str,
    *,
    acceptance: CapsuleAcceptance | None = None,
    prompt_ceiling: int = DEFAULT_PROMPT_CEILING,
) -> PreparedCapsule:
    """The capsule ``spec`` names for a launch in ``cwd``, checked and registered.

    ``spec``: ``latest`` (the newest capsule of the branch ``cwd`` is on) or a path in
    the repository. Raises ``capsule_not_found`` / ``capsule_path_unsafe`` (finding it),
    ``capsule_invalid``, ``capsule_has_secrets`` or ``capsule_stale`` (refusing it).
    """
    acceptance = acceptance or CapsuleAcceptance()
    repo = await asyncio.to_thread(worktree_root, cwd) or cwd
    branch = await asyncio.to_thread(current_branch, cwd)
    path = await asyncio.to_thread(resolve_capsule, repo, spec, branch)
    shown = _shown(path, repo)
    try:
        text = await asyncio.to_thread(read_capsule, path)
    except DocumentInvalid as exc:  # it changed under us: not a regular UTF-8 file now
        raise CapsuleInvalid(shown, [Problem(0, "unreadable", exc.message)]) from None
    try:
        capsule = parse_capsule(text)
    except CapsuleSyntaxError as exc:
        raise CapsuleInvalid(shown, exc.problems) from None
    problems = await asyncio.to_thread(
        check_capsule, path, text, repo=repo, prompt_ceiling=prompt_ceiling
    )
    accepted = _refuse(shown, problems, acceptance)
    # A capsule edited since it was registered is another capsule: a new row.
    document = await current_capsule_document(store, path, text)
    if document is None:
        document = await register_capsule(
            store,
            path,
            text,
            source_session=capsule.front.source_session or None,
            producer="person",
            status=DocumentStatus.FINAL,
        )
    body = reader_body(capsule)
    return PreparedCapsule(
        InjectedCapsule(
            body=body, document_id=document.document_id, digest=digest(body), path=str(path)
        ),
        accepted,
    )
