"""The run wing composed: which part of a run's life is handed which other part.

Owns the wiring only (the order the parts are made in); each part owns its concern.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.conversations import Conversations
from core.models import OwnerKind
from core.runs.closing import RunCloser
from core.runs.detached_runs import DetachedRuns
from core.runs.driver import ACTIVITY_INTERVAL_S, RunDriver
from core.runs.handle import AfterTurn
from core.runs.in_flight import HEARTBEAT_S, RunsInFlight
from core.runs.launch import Launcher
from core.runs.ownership import RunOwnership
from core.runs.plans import RunPlans
from core.runs.recording import RunRecorder
from core.runs.replies import RunReplies
from core.services import CoreServices


@dataclass(frozen=True, slots=True)
class Runs:
    """The run wing, composed once per open core."""

    flight: RunsInFlight
    plans: RunPlans
    recorder: RunRecorder
    closer: RunCloser
    driver: RunDriver
    detached: DetachedRuns
    launcher: Launcher
    ownership: RunOwnership

    @classmethod
    def make(
        cls,
        core: CoreServices,
        conversations: Conversations,
        *,
        owner_kind: OwnerKind,
        heartbeat_s: float | None,
        activity_interval_s: float | None,
        after_turn: AfterTurn | None,
    ) -> Runs:
        """``heartbeat_s``, ``activity_interval_s``: None for the parts' own defaults."""
        flight = RunsInFlight(
            core,
            owner_kind=owner_kind,
            heartbeat_s=HEARTBEAT_S if heartbeat_s is None else heartbeat_s,
            after_turn=after_turn,
        )
        plans = RunPlans(core, conversations.ids)
        recorder = RunRecorder(core, flight, conversations.archive)
        replies = RunReplies(core)
        closer = RunCloser(core, flight, replies)
        driver = RunDriver(
            core,
            flight,
            replies,
            closer,
            conversations.imports,
            activity_interval_s=(
                ACTIVITY_INTERVAL_S if activity_interval_s is None else activity_interval_s
            ),
        )
        detached = DetachedRuns(core, plans, recorder, driver, closer, flight)
        return cls(
            flight=flight,
            plans=plans,
            recorder=recorder,
            closer=closer,
            driver=driver,
            detached=detached,
            launcher=Launcher(core, conversations.ids, plans, recorder, driver, detached, flight),
            ownership=RunOwnership(core, flight, conversations.ids),
        )
