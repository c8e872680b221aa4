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

A run's handle (what a caller holds) is :mod:`core.runs.handle`; the wing is composed
in :mod:`core.runs.wing`. This package imports nothing itself, so a front end that
starts no run (the panel's first frame) never loads the launch machinery.
"""
