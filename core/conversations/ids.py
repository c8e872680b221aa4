"""Ids people type and ids delegate prints: a unique prefix resolved, the shortest unique prefix.

Owns the rules for naming a session or a run by hand: exact id first, then a unique
prefix of ``MIN_ID_PREFIX`` characters; ambiguity and absence are typed errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.errors import AmbiguousId, DelegateError, UnknownConversation
from core.requests import printable, storable
from core.services import Wing

if TYPE_CHECKING:
    pass

# Ids people type: a unique prefix of this many characters names a session.
MIN_ID_PREFIX = 6
# Ids we print: at least this long, longer where another session shares the prefix.
SHORT_ID_CHARS = 8
SHORT_ID_SCAN = 50  # sessions sharing a printed prefix looked at (more is absurd)
AMBIGUOUS_SHOWN = 5


class SessionIds(Wing):
    """Resolve what a person typed to a full id; print ids as short as they stay unique."""

    async def resolve_id(self, id_or_prefix: str) -> str:
        """The full conversation id that ``id_or_prefix`` names (a unique prefix of 6+).

        An exact id wins; otherwise a prefix of at least ``MIN_ID_PREFIX``
        characters that matches one session. Several matches are ``ambiguous_id``
        listing them; none is ``unknown_conversation``. An id a session had before
        its agent re-keyed it (the id a Codex launch printed) names it too.
        """
        if not isinstance(id_or_prefix, str) or not storable(id_or_prefix):
            raise UnknownConversation(printable(id_or_prefix))
        current = await self.store.sessions.current_id(id_or_prefix)
        if current is not None:
            return current
        found: list[str] = []
        if len(id_or_prefix) >= MIN_ID_PREFIX:
            keys = await self.store.sessions.keys_with_prefix(id_or_prefix, SHORT_ID_SCAN)
            found = list(dict.fromkeys(cid for _, cid in keys))[: AMBIGUOUS_SHOWN + 1]
        if not found:
            raise UnknownConversation(id_or_prefix)
        if len(found) > 1:
            shown = found[:AMBIGUOUS_SHOWN]
            raise AmbiguousId(id_or_prefix, shown, more=len(found) > AMBIGUOUS_SHOWN)
        return found[0]

    async def short_ids(self, conversation_ids: Iterable[str]) -> dict[str, str]:
        """The shortest prefix (at least ``SHORT_ID_CHARS``) naming each id uniquely.

        Computed over the whole store: time-ordered ids (Codex's UUIDv7) share
        their first eight characters for sessions started within a minute.
        """
        shortest: dict[str, str] = {}
        for cid in conversation_ids:
            if cid in shortest or not storable(cid):
                continue
            length = min(len(cid), SHORT_ID_CHARS)
            # Old ids count: a prefix printed here must not name another session too.
            neighbours = await self.store.sessions.keys_with_prefix(cid[:length], SHORT_ID_SCAN)
            for other, owner in neighbours:
                if owner != cid:
                    common = next(
                        (i for i, (a, b) in enumerate(zip(cid, other, strict=False)) if a != b),
                        min(len(cid), len(other)),
                    )
                    length = max(length, min(len(cid), common + 1))
            shortest[cid] = cid[:length]
        return shortest

    async def session_or_run_id(self, ident: str) -> str:
        """A session id (a unique prefix resolved) or, failing that, ``ident`` as a run id."""
        try:
            return await self.resolve_id(ident)
        except UnknownConversation:
            return ident

    async def names_something(self, ident: str) -> bool:
        try:
            await self.store.sessions.get(ident)
        except DelegateError:
            try:
                await self.store.runs.get(ident)
            except DelegateError:
                return False
        return True
