"""Reading agents' transcripts into the store: a whole import, one session's file, the last report.

Owns which transcript root an agent's session is read from (its config's environment).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core import ids
from core.conversations.reading import SessionReader
from core.models import Session
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.importing.report import ImportProgress, ImportReport
    from core.runners import RunRequest

log = logging.getLogger(__name__)


# The environment variable that moves each agent's transcript folder from its default.
TRANSCRIPT_ROOTS = {ids.CLAUDE_CODE: "CLAUDE_CONFIG_DIR", ids.CODEX: "CODEX_HOME"}


class TranscriptImports(Wing):
    """Index the transcripts Claude Code and Codex write, all or one."""

    def __init__(self, core: CoreServices, reader: SessionReader) -> None:
        super().__init__(core)
        self.reader = reader

    async def import_sources(
        self,
        claude_dir: Path | None = None,
        codex_dir: Path | None = None,
        progress: Callable[[ImportProgress], None] | None = None,
        *,
        workers: int | None = None,
        list_first_bytes: int | None = None,
    ) -> ImportReport:
        """Index the sessions Claude Code and Codex wrote (incremental; docs/import.md).

        ``claude_dir`` defaults to ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``,
        ``codex_dir`` to ``$CODEX_HOME`` or ``~/.codex``. ``workers``: parser
        processes (None: decide from the amount to read; 0: parse in a thread).
        ``list_first_bytes``: from how many bytes of never-read files every new
        session is listed from its file's head and tail first (None: the default).
        """
        from core.importing.importer import import_sources  # deferred: multiprocessing et al.

        return await import_sources(
            self.store,
            claude_dir,
            codex_dir,
            progress,
            workers=workers,
            windows=self.settings.context,
            list_first_bytes=list_first_bytes,
        )

    async def refresh_transcript(self, conversation_id: str) -> Session:
        """Read what an agent CLI appended to the session's transcript (a person
        just worked in it interactively) and return the session as it is now.

        Only that file is read, from where the last import stopped; delegate's
        own conversations have no transcript and come back unchanged.
        """
        session = await self.reader.get_session(conversation_id)
        config = self.settings.agents.get(session.agent_id)
        source = session.source
        if source not in TRANSCRIPT_ROOTS:
            source = ids.RUNNER_SOURCES.get(config.runner if config is not None else "", "")
        if not source:
            return session
        await self._read_one(source, session.conversation_id, session.agent_id)
        return await self.reader.get_session(session.conversation_id)

    async def last_import_report(self) -> ImportReport | None:
        """The report of the last import (any process), or None before the first."""
        from core.importing.importer import load_report

        return load_report(await self.store.imports.last_report())

    async def import_run_transcript(self, request: RunRequest) -> None:
        """Index the transcript the agent CLI just wrote (that file only)."""
        runner = self.settings.agents[request.agent_id].runner
        source = ids.RUNNER_SOURCES.get(runner, ids.CLAUDE_CODE)
        try:
            await self._read_one(source, request.conversation_id, request.agent_id)
        except Exception:  # the run is over and stored; a failed index is not its failure
            log.exception("importing the transcript of run %s failed", request.run_id)

    async def _read_one(self, source: str, conversation_id: str, agent_id: str) -> None:
        """Read one session's transcript, under the root its agent's environment names."""
        from core.importing.importer import import_transcript  # deferred: multiprocessing et al.

        config = self.settings.agents.get(agent_id)
        env = {**os.environ, **(config.env if config is not None else {})}
        root = env.get(TRANSCRIPT_ROOTS[source])
        await import_transcript(
            self.store,
            source,
            conversation_id,
            Path(root) if root else None,
            windows=self.settings.context,
        )
