"""One description per history event kind, rendered by every front end.

``catalog.describe`` turns an event into an :class:`EventText`: the panel's history cell
draws its ``title`` and ``detail``, ``delegate watch`` prints its ``line``, ``delegate
history`` shows its ``record``. A new event kind is described once, in the module of
its area, and appears everywhere:

=====================  ========================================================
module                 kinds it describes
=====================  ========================================================
``runs``               launches, run ends, follow-ups, interrupts; a session
                       archived, restored, renamed or purged
``context``            context thresholds, clamps, hand-offs, continuations,
                       checkpoints
``capsules``           capsules saved, injected, gaps, stale files
``returns``            compact returns accepted or rejected, chains ended
=====================  ========================================================

``model`` is what a description holds; ``catalog`` maps each kind to its describer.
``words``, ``outcomes`` and ``return_words`` hold the wording those share with the
rest of the front ends (safe text, ids, counts, a hand-off's outcome, role names).
"""
