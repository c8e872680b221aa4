"""The leader's CapsuleDrift monitor marks a registered capsule stale when a file it
references changes (real git repository, real supervisor)."""

from __future__ import annotations

from pathlib import Path

from capsule_support import capsule_text, make_repo, save
from supervisor_support import recording

from core.capsules.drift import reference_for
from core.events import CapsuleStale
from core.models import DocumentStatus
from core.orchestrator import AgentOrchestrator
from core.supervisor import CapsuleDrift, Supervisor

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}


async def test_a_capsule_whose_reference_changed_is_marked_stale_once(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    reference = reference_for(repo, "src/app.py")
    references = f"references:\n  - path: {reference.path}\n    blob: {reference.blob}\n"
    save(repo, capsule_text(references=references))
    [handle] = await orch.delegate(prompt="go", agent_id="echo", cwd=str(repo), capsule="latest")
    run = await handle.wait()
    assert run.capsule_id is not None

    with recording(orch.bus) as seen:
        async with Supervisor(orch, monitors=[CapsuleDrift(every_s=0.0)], **FAST):
            (repo / "src" / "app.py").write_text("print('v2')\n", encoding="utf-8")
            event = await seen.wait_for(lambda e: isinstance(e, CapsuleStale))
    assert isinstance(event, CapsuleStale)
    assert (event.document_id, event.changed) == (run.capsule_id, ("src/app.py",))
    assert event.conversation_id == "20261123-abc"  # the capsule's source session
    document = await orch.store.documents.get(run.capsule_id)
    assert document.status is DocumentStatus.STALE
    # Marked once: a later round leaves a stale capsule alone.
    await CapsuleDrift(every_s=0.0).on_tick(Supervisor(orch, **FAST))
    stale = [e for e in await orch.history(50) if isinstance(e, CapsuleStale)]
    assert len(stale) == 1
