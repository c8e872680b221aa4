"""Old address of :mod:`core.importing.report`, kept until its last caller moves.

The orchestrator still names this module while it is being split; once it imports
from ``core.importing`` this goes.
"""

from core.importing.report import ImportProgress, ImportReport

__all__ = ["ImportProgress", "ImportReport"]
