"""Old address of :mod:`core.importing.importer`, kept until its last callers move.

The import moved out of the parsers' folder into :mod:`core.importing`. The
orchestrator, the agent CLIs' hooks and ``delegate open`` still name this module
while they are being split; once they import from ``core.importing`` this goes.
"""

from core.importing.importer import import_sources, import_transcript, load_report

__all__ = ["import_sources", "import_transcript", "load_report"]
