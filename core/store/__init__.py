"""The embedded store: one SQLite file, small repositories over it.

``Store.open(path)`` opens the database (:mod:`core.store.database`: a writer
connection with ``BEGIN IMMEDIATE`` transactions and a reader connection for
WAL snapshot reads) and exposes one repository per concern, each owning its
tables and SQL::

    store.sessions    listing, filter, counts, lookup, re-key   (sessions)
    store.runs        launch, follow-up claim, finish, run rows (runs)
    store.messages    append and page messages                  (messages)
    store.history     history events                            (history)
    store.archive     archive, restore, rename                  (sessions)
    store.tombstones  dismiss, dismissed ids                    (dismissed)
    store.imports     transcript index and import reports       (source_files, import_reports)
    store.agents      configured agents                         (agents)
    store.bulk        whole finished sessions (demo, benchmarks)
    store.changes     the change feed: data version, what changed since a cursor
    store.leases      named leases with an expiry (supervisor leader election)
    store.context     context samples (trend, rate) and threshold crossings
    store.documents   context documents registry: capsules, hand-offs, returns
    store.checkpoints marks in a session; forks and restores from them
    store.returns     compact-return steps of role chains      (return_steps)

Row types (what goes in) live in :mod:`core.store.rows` and are re-exported here. The
repositories a listing does not use are made, and their modules imported, on first
use: the panel's first frame needs only sessions, runs, messages and history.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.store.database import Database
from core.store.history import HistoryEvents, HistoryRepository
from core.store.messages import (
    SQL_RECENT_MESSAGES,
    SQL_RECENT_MESSAGES_BEFORE,
    MessagesRepository,
)
from core.store.rows import (
    FinishedSession,
    HistoryRow,
    ImportCommit,
    ImportedSession,
    NewMessage,
    NewRun,
    NewSession,
    SourceFileProblem,
    SourceFileRow,
    SourceFileUpdate,
    TranscriptFile,
    ready_state,
)
from core.store.runs import AgentProcess, RunsRepository
from core.store.sessions import SQL_LIST_SESSIONS, SQL_LIST_SESSIONS_AFTER, SessionsRepository

if TYPE_CHECKING:
    from core.store.agents import AgentsRepository
    from core.store.archive import ArchiveRepository
    from core.store.bulk import BulkRepository
    from core.store.changes import ChangeCursor, ChangeSet, ChangesRepository, StoredHistory
    from core.store.checkpoints import CheckpointsRepository, NewCheckpoint, SessionCopy
    from core.store.context import ContextRepository
    from core.store.documents import DocumentsRepository, NewDocument
    from core.store.imports import ImportsRepository
    from core.store.leases import LeasesRepository
    from core.store.returns import (
        DeletedReturns,
        NewReturnStep,
        ReturnSession,
        ReturnStepsRepository,
    )
    from core.store.tombstones import TombstonesRepository

# Row types of the repositories a listing does not use: their modules load on first
# use (the panel's first frame needs sessions, runs, messages and history only).
_LAZY_NAMES = {
    "ChangeCursor": "core.store.changes",
    "ChangeSet": "core.store.changes",
    "StoredHistory": "core.store.changes",
    "NewCheckpoint": "core.store.checkpoints",
    "SessionCopy": "core.store.checkpoints",
    "NewDocument": "core.store.documents",
    "DeletedReturns": "core.store.returns",
    "NewReturnStep": "core.store.returns",
    "ReturnSession": "core.store.returns",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "SQL_LIST_SESSIONS",
    "SQL_LIST_SESSIONS_AFTER",
    "SQL_RECENT_MESSAGES",
    "SQL_RECENT_MESSAGES_BEFORE",
    "AgentProcess",
    "ChangeCursor",
    "ChangeSet",
    "Database",
    "DeletedReturns",
    "FinishedSession",
    "HistoryEvents",
    "HistoryRow",
    "ImportCommit",
    "ImportedSession",
    "NewCheckpoint",
    "NewDocument",
    "NewMessage",
    "NewReturnStep",
    "NewRun",
    "NewSession",
    "ReturnSession",
    "SessionCopy",
    "SourceFileProblem",
    "SourceFileRow",
    "SourceFileUpdate",
    "Store",
    "StoredHistory",
    "TranscriptFile",
    "ready_state",
]


class Store:
    """The delegate database and its repositories. Open with :meth:`open`, then :meth:`close`."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.messages = MessagesRepository(db)
        self.history = HistoryRepository(db)
        self.runs = RunsRepository(db, self.messages, self.history)
        # Every reader first interrupts runs whose owner is gone, so a killed owner
        # never leaves a run in flight.
        self.sessions = SessionsRepository(db, before_read=self._interrupt_dead_runs)

    # The other repositories are made (and their modules imported) on first use.

    @functools.cached_property
    def tombstones(self) -> TombstonesRepository:
        from core.store.tombstones import TombstonesRepository

        return TombstonesRepository(self.db, before_dismiss=self._interrupt_dead_runs)

    @functools.cached_property
    def archive(self) -> ArchiveRepository:
        from core.store.archive import ArchiveRepository

        return ArchiveRepository(self.db, before_write=self._interrupt_dead_runs)

    @functools.cached_property
    def imports(self) -> ImportsRepository:
        from core.store.imports import ImportsRepository

        return ImportsRepository(self.db)

    @functools.cached_property
    def agents(self) -> AgentsRepository:
        from core.store.agents import AgentsRepository

        return AgentsRepository(self.db)

    @functools.cached_property
    def bulk(self) -> BulkRepository:
        from core.store.bulk import BulkRepository

        return BulkRepository(self.db, self.messages)

    @functools.cached_property
    def changes(self) -> ChangesRepository:
        from core.store.changes import ChangesRepository

        return ChangesRepository(self.db)

    @functools.cached_property
    def leases(self) -> LeasesRepository:
        from core.store.leases import LeasesRepository

        return LeasesRepository(self.db)

    @functools.cached_property
    def context(self) -> ContextRepository:
        from core.store.context import ContextRepository

        return ContextRepository(self.db)

    @functools.cached_property
    def documents(self) -> DocumentsRepository:
        from core.store.documents import DocumentsRepository

        return DocumentsRepository(self.db)

    @functools.cached_property
    def checkpoints(self) -> CheckpointsRepository:
        from core.store.checkpoints import CheckpointsRepository

        return CheckpointsRepository(self.db)

    @functools.cached_property
    def returns(self) -> ReturnStepsRepository:
        from core.store.returns import ReturnStepsRepository

        return ReturnStepsRepository(self.db)

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def read_only(self) -> bool:
        """True when the file cannot be written: reads work, writes raise ``store_error``."""
        return self.db.read_only

    @classmethod
    async def open(cls, path: Path) -> Store:
        """Open (creating if needed) the database file and bring its schema up to date."""
        return cls(await Database.open(path))

    async def close(self) -> None:
        await self.db.close()

    async def _interrupt_dead_runs(self) -> None:
        await self.runs.interrupt_dead_runs()
