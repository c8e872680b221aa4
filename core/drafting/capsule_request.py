"""``request_capsule``: ask a session for its capsule and keep the answer as a draft.

The seed's manual step, automated: the capsule prompt goes into the session as a
follow-up through its own runner (our agents, Claude Code, Codex), the capsule is taken
from the reply, checked, written under ``<repo>/.delegate/capsules/<branch>/`` and
registered as a draft by the agent; the history gets ``capsule_saved``. A draft with
problems is still saved: a person reviews it before any launch carries it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.capsules.check import check_capsule
from core.capsules.drift import ReferenceUnsafe, reference_for
from core.capsules.markdown import parse_capsule, render_capsule, with_front
from core.capsules.model import Reference
from core.capsules.prompt import capsule_prompt
from core.capsules.registry import register_capsule
from core.capsules.storage import DETACHED, save_capsule
from core.documents.problems import Problem
from core.documents.write_folder import write_folder
from core.drafting.capsule_extract import extract_capsule
from core.errors import CapsuleRequestFailed, DelegateError
from core.events import CapsuleSaved
from core.gitinfo import current_branch
from core.models import DocumentStatus, RunStatus, Session
from core.orchestrator import AgentOrchestrator

if TYPE_CHECKING:
    from core.store.documents import DocumentsRepository

ASK_TIMEOUT_S = 600.0  # how long an agent may take to write its capsule


@dataclass(frozen=True, slots=True)
class CapsuleRepos:
    """What a capsule request writes: the documents registry, and the data folder a
    capsule goes under when delegate does not write in the session's repository."""

    documents: DocumentsRepository
    data_dir: Path

    @classmethod
    def of(cls, orchestrator: AgentOrchestrator) -> CapsuleRepos:
        return cls(orchestrator.store.documents, orchestrator.store.path.parent)


@dataclass(frozen=True, slots=True)
class CapsuleDraft:
    """A capsule an agent wrote, saved and registered as a draft, and what checks found."""

    path: Path
    document_id: str
    problems: list[Problem]


ANSWER_ONLY = (
    "\nDo not write the file yourself: delegate saves your answer there as a draft for review.\n"
)
"""What a request adds to the capsule prompt: the answer is the capsule, and only that
(an agent with file tools would otherwise write the path the prompt names)."""


async def request_capsule(
    orchestrator: AgentOrchestrator,
    session_id: str,
    *,
    budget: int | None = None,
    mini: bool = False,
    timeout_s: float = ASK_TIMEOUT_S,
    repos: CapsuleRepos | None = None,
) -> CapsuleDraft:
    """Ask ``session_id`` for its capsule; save and register the answer as a draft.

    Raises what a follow-up raises when the session cannot be asked (busy, unknown,
    its folder gone), and :class:`CapsuleRequestFailed` when it gives no capsule.
    ``repos``: what it writes (the orchestrator's store's when not given).
    """
    orch = orchestrator
    repos = repos if repos is not None else CapsuleRepos.of(orch)
    session = await orch.get_session(session_id)
    cid = session.conversation_id
    repo, branch = await asyncio.to_thread(
        _where, session, repos.data_dir, orch.settings.trusted_folders
    )
    now = orch.clock()
    prompt = await asyncio.to_thread(
        capsule_prompt,
        repo,
        session=cid,
        file=None,
        stub=False,
        plan_slug=None,
        budget=budget,
        now=now,
        mini=mini,
        prompt_ceiling=orch.settings.capsule_max_tokens,
        branch=branch,
    )
    [handle] = await orch.delegate(prompt=prompt.text + ANSWER_ONLY, conversation_id=cid)
    try:
        run = await asyncio.wait_for(handle.wait(), timeout_s)
    except TimeoutError:
        handle.cancel()
        raise CapsuleRequestFailed(
            f"session {cid} did not answer with its capsule within {timeout_s:g} seconds"
            " (its run was stopped)"
        ) from None
    if run.status is not RunStatus.COMPLETED:
        reason = f": {run.error}" if run.error else ""
        raise CapsuleRequestFailed(
            f"session {cid}'s run {run.run_id} ended {run.status.value}{reason}"
        )
    text = extract_capsule(run.output or "")
    if text is None:
        raise CapsuleRequestFailed(
            f"session {cid} answered without a capsule (no front matter in its reply;"
            f" `delegate runs show {run.run_id}` shows it)"
        )
    text = await asyncio.to_thread(with_blob_ids, repo, text)
    path = await asyncio.to_thread(save_capsule, repo, text, branch=branch, created=now)
    document = await register_capsule(
        repos,
        path,
        text,
        source_session=cid,
        producer="agent",
        status=DocumentStatus.DRAFT,
        created=now,
    )
    problems = await asyncio.to_thread(
        check_capsule,
        path,
        text,
        repo=repo,
        prompt_ceiling=orch.settings.capsule_max_tokens,
    )
    await orch.emit(
        CapsuleSaved(
            at=orch.clock(),
            conversation_id=cid,
            agent_id=session.agent_id,
            document_id=document.document_id,
            path=str(path),
            producer="agent",
            draft=True,
        )
    )
    return CapsuleDraft(path=path, document_id=document.document_id, problems=problems)


def _where(session: Session, data_dir: Path, trusted_folders: list[str]) -> tuple[Path, str]:
    """Where the session's capsule goes (its repository when delegate writes there, see
    :mod:`core.documents.write_folder`, else under the data folder) and its branch."""
    place = write_folder(
        session.cwd, source=session.source, data_dir=data_dir, trusted_folders=trusted_folders
    )
    repo = place.ready()
    checked = current_branch(place.repository) if place.repository is not None else None
    return repo, checked or session.git_branch or DETACHED


def with_blob_ids(repo: Path, text: str) -> str:
    """The capsule with the blob id of each reference the agent named without one (the
    prompt asks for paths; git knows the ids). Unchanged when there is nothing to fill
    or the front matter does not parse: the checks report that."""
    try:
        capsule = parse_capsule(text)
    except DelegateError:
        return text
    references = capsule.front.references
    if all(r.blob is not None for r in references):
        return text
    filled = tuple(_filled(repo, r) for r in references)
    if filled == references:
        return text
    front = capsule.front.model_copy(update={"references": filled})
    return render_capsule(with_front(capsule, front))


def _filled(repo: Path, reference: Reference) -> Reference:
    if reference.blob is not None:
        return reference
    try:
        return reference_for(repo, reference.path)
    except ReferenceUnsafe:  # a path outside the repository: the checks say so
        return reference
