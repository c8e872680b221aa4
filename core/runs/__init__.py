"""Runs: a run's life from the request to its close, one owner for each part of it.

One object per concern, each over the shared :class:`~core.services.CoreServices`::

    flight     handles of runs in flight here, their heartbeat   (runs/in_flight.py)
    plans      agent, runner, folder, role, capsule: checked     (runs/plans.py)
    recorder   the new or claimed session and its run, stored    (runs/recording.py)
    replies    what an agent says, stored as it says it          (runs/replies.py)
    closer     the close: outcome, context sample, return, gaps  (runs/closing.py)
    driver     the loop that drives a runner to the end          (runs/driver.py)
    detached   runs a worker process of their own drives         (runs/detached_runs.py)
    launcher   the ``delegate`` verb: launch or follow up        (runs/launch.py)
    ownership  stop from anywhere, list, find, interrupt stale   (runs/ownership.py)

A run's handle (what a caller holds) is :mod:`core.runs.handle`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.conversations import Conversations
from core.models import OwnerKind
from core.runs.closing import RunCloser
from core.runs.detached_runs import DetachedRuns
from core.runs.driver import RunDriver
from core.runs.handle import AfterTurn
from core.runs.in_flight import RunsInFlight
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
        heartbeat_s: float,
        activity_interval_s: float,
        after_turn: AfterTurn | None,
    ) -> Runs:
        flight = RunsInFlight(
            core, owner_kind=owner_kind, heartbeat_s=heartbeat_s, after_turn=after_turn
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
            activity_interval_s=activity_interval_s,
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
