"""Reading sessions: lists, children, messages, finding text, counts, search, reports.

Owns no state: every answer is read from the store (or, for an imported session, from
its agent's transcript through its :class:`~core.conversations.sources.MessageSource`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core import cursors
from core.clock import to_us
from core.conversations.ids import SessionIds
from core.conversations.sources import message_source
from core.errors import InvalidRequest
from core.events import CapsuleGap, HistoryEvent
from core.models import (
    DEFAULT_MESSAGE_PAGE,
    DEFAULT_SEARCH_PAGE,
    DEFAULT_SESSION_PAGE,
    MAX_PAGE,
    ContextDocument,
    ContextReport,
    DocumentKind,
    DocumentStatus,
    MessageMatch,
    MessagePage,
    Run,
    SearchPage,
    Session,
    SessionPage,
    SessionScope,
    SessionSort,
    SessionsRequest,
    TranscriptDetails,
)
from core.requests import storable, validate
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    pass

MAX_FIND_CHARS = 200  # what find_message looks for: a phrase, not a document


class SessionReader(Wing):
    """The read side of sessions: every query a front end makes."""

    def __init__(self, core: CoreServices, ids: SessionIds) -> None:
        super().__init__(core)
        self.ids = ids

    async def list_sessions(
        self,
        limit: int = DEFAULT_SESSION_PAGE,
        cursor: str | None = None,
        *,
        query: str | None = None,
        scope: SessionScope | None = None,
    ) -> SessionPage:
        """The sessions ``scope`` covers (default: the reusable pool, top-level,
        newest activity first), one keyset page at a time.

        ``query`` (the picker's filter) keeps sessions whose agent, title, name,
        cwd, branch or id contain it, case-insensitively. A cursor continues only
        a listing in its own order.
        """
        scope = scope or SessionScope()
        request = validate(SessionsRequest, {"operation": "list", "limit": limit, "cursor": cursor})
        after = (
            cursors.decode_session_cursor(request.cursor, scope.sort)
            if request.cursor is not None
            else None
        )
        sessions, nxt = await self.store.sessions.page(request.limit or limit, after, query, scope)
        return SessionPage(
            sessions=sessions,
            next_cursor=cursors.encode_session_cursor(nxt) if nxt else None,
        )

    async def list_children(
        self,
        parent_id: str,
        limit: int = MAX_PAGE,
        cursor: str | None = None,
        *,
        scope: SessionScope | None = None,
    ) -> SessionPage:
        """A session's sub-agents, oldest first; warm-ups only when ``scope.warmup``."""
        request = validate(SessionsRequest, {"operation": "list", "limit": limit, "cursor": cursor})
        after = (
            cursors.decode_session_cursor(request.cursor, SessionSort.CREATED)
            if request.cursor is not None
            else None
        )
        sessions, nxt = await self.store.sessions.children(
            parent_id, request.limit or limit, after, scope
        )
        return SessionPage(
            sessions=sessions,
            next_cursor=cursors.encode_session_cursor(nxt) if nxt else None,
        )

    async def recent_messages(
        self,
        conversation_id: str,
        limit: int = DEFAULT_MESSAGE_PAGE,
        cursor: str | None = None,
    ) -> MessagePage:
        """The last ``limit`` messages, newest first; ``next_cursor`` pages back."""
        request = validate(
            SessionsRequest,
            {
                "operation": "messages",
                "conversation_id": conversation_id,
                "limit": limit,
                "cursor": cursor,
            },
        )
        conversation_id = await self.ids.resolve_id(conversation_id)
        source = await message_source(self.store, conversation_id)
        return await source.page(request.limit or limit, request.cursor)

    async def find_message(
        self,
        conversation_id: str,
        text: str,
        limit: int = DEFAULT_MESSAGE_PAGE,
        cursor: str | None = None,
    ) -> MessageMatch | None:
        """The newest message before ``cursor`` (the end when None) whose text holds
        ``text``, case-insensitive, with the page of ``limit`` messages ending at it.

        An imported transcript is read backwards from ``cursor`` only as far as
        the match. ``resume_cursor`` searches on to older matches. None: no match.
        """
        text = text.strip() if isinstance(text, str) else ""
        if not text or len(text) > MAX_FIND_CHARS or not storable(text) or "\n" in text:
            raise InvalidRequest(f"text: one line of 1 to {MAX_FIND_CHARS} characters to find")
        conversation_id = await self.ids.resolve_id(conversation_id)
        source = await message_source(self.store, conversation_id)
        found = await source.find(text, cursor)
        if found is None:
            return None
        page = await source.page(limit, found.ending)
        if not page.messages:
            return None
        return MessageMatch(message_id=page.messages[0].id, page=page, resume_cursor=found.resume)

    async def get_session(self, conversation_id: str) -> Session:
        return await self.store.sessions.get(await self.ids.resolve_id(conversation_id))

    async def get_sessions(
        self, conversation_ids: Sequence[str], *, active_since: datetime | None = None
    ) -> dict[str, Session]:
        """The sessions of these full ids that exist (and were last active at or after
        ``active_since``, when given), by id: one read for a batch of changes. No
        prefixes: an id a person typed goes through :meth:`get_session`."""
        since = None if active_since is None else to_us(active_since)
        return await self.store.sessions.get_many(conversation_ids, since)

    async def change_count(self) -> int:
        """The store's change counter: it moves with every change to a session or a run,
        by any process, so two equal readings bracket a consistent read."""
        return (await self.store.changes.head()).seq

    async def context_report(self, conversation_id: str) -> ContextReport:
        """A session's context: figures, window and its source, trend, breakdown by
        category, thresholds crossed, checkpoints, hand-offs and the hand-off chain."""
        from core.context.report import ReportRepos, build_report

        session = await self.get_session(conversation_id)
        from core.context.thresholds import effective_context

        # The project's own [context] file may say otherwise: a small file read, off the loop.
        thresholds = await asyncio.to_thread(effective_context, self.settings, session.cwd)
        return await build_report(ReportRepos.of(self.store), session, thresholds)

    async def transcript_path(self, conversation_id: str) -> Path | None:
        """The transcript file Claude Code or Codex keeps for this session, or None.

        None for a session only delegate recorded. The path is what the import
        found; the file may have gone since (callers open it with the usual
        regular-file checks).
        """
        path = await self.store.imports.source_path(await self.ids.resolve_id(conversation_id))
        return Path(path) if path is not None else None

    async def transcript_details(self, conversation_id: str) -> TranscriptDetails | None:
        """The transcript file of an imported session with its size now and its model;
        None for a session only delegate recorded, or whose file is gone."""
        found = await self.store.imports.source_file(await self.ids.resolve_id(conversation_id))
        if found is None:
            return None
        path, model = found
        try:
            size = (await asyncio.to_thread(os.stat, path)).st_size
        except OSError:
            return None
        return TranscriptDetails(path=Path(path), size=size, model=model)

    async def latest_run(self, conversation_id: str) -> Run | None:
        """The session's newest run (in flight or not), or None before its first."""
        runs = await self.store.runs.for_session(await self.ids.resolve_id(conversation_id))
        return runs[-1] if runs else None

    async def status_counts(self) -> dict[str, int]:
        """Reusable sessions by state and their total footprint in bytes."""
        return await self.store.sessions.count_by_state()

    async def count_sessions(
        self, *, query: str | None = None, scope: SessionScope | None = None
    ) -> int:
        """How many sessions ``scope`` covers and ``query`` keeps."""
        return await self.store.sessions.count_matching(query, scope)

    async def search_sessions(
        self,
        query: str,
        limit: int = DEFAULT_SEARCH_PAGE,
        cursor: str | None = None,
        *,
        scope: SessionScope | None = None,
    ) -> SearchPage:
        """Sessions in ``scope`` whose name, title, prompts or replies match ``query``, best first.

        The language (words, "phrases", prefix*, agent:, state:, branch:, cwd:)
        is core.search.parser's; a query that cannot be run is ``invalid_request``.
        ``state:archived`` searches the archive too, whatever ``scope.archived`` says.
        """
        request = validate(
            SessionsRequest,
            {"operation": "search", "query": query, "limit": limit, "cursor": cursor},
        )
        # Deferred: the panel's first frame lists without searching; core.search loads
        # on the first search (tests/test_startup_imports.py keeps it so).
        from core.search.parser import parse_query
        from core.search.querying import SessionSearch

        parsed = parse_query(query)
        return await SessionSearch(self.store.db).page(
            parsed, request.limit or limit, request.cursor, scope
        )

    async def fullest_sessions(self, limit: int = 3) -> list[Session]:
        """The sessions whose context windows are the most used."""
        return await self.store.sessions.fullest(limit)

    async def waiting_handoffs(self, limit: int = 10) -> list[ContextDocument]:
        """Hand-offs written for a person to continue (``HANDOFF_PENDING.md``), newest first."""
        return await self.store.documents.find(
            DocumentKind.HANDOFF, status=DocumentStatus.PENDING, limit=limit
        )

    async def capsule_gaps(
        self, conversation_id: str | None = None, limit: int = 10
    ) -> list[CapsuleGap]:
        """Capsule gaps newest first: all, or those reported to or by a session."""
        cid = await self.ids.resolve_id(conversation_id) if conversation_id is not None else None
        gaps = await self.store.history.capsule_gaps(cid, limit=limit)
        return [g for g in gaps if isinstance(g, CapsuleGap)]

    async def history(self, limit: int = 50) -> list[HistoryEvent]:
        """The latest history events, newest first."""
        return (await self.store.history.events(limit)).events
