"""Agents: the configured agents and their context limits."""

from __future__ import annotations

from collections.abc import Iterable

from core.store.database import Database


class AgentsRepository:
    """The ``agents`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def upsert(self, agents: Iterable[tuple[str, str, int]]) -> None:
        """Record configured agents: ``(agent_id, runner, context_limit)``.

        Writes only what changed, and nothing to a read-only store (the table is
        a record of the configuration, not a source of it): opening never writes
        unless something needs writing, and a read-only store still opens.
        """
        if self._db.read_only:
            return
        wanted = {agent_id: (runner, limit) for agent_id, runner, limit in agents}
        stored = {
            str(r["agent_id"]): (r["runner"], r["context_limit"])
            for r in await self._db.fetch_all("SELECT agent_id, runner, context_limit FROM agents")
        }
        changed = [(a, r, lim) for a, (r, lim) in wanted.items() if stored.get(a) != (r, lim)]
        if not changed:
            return
        async with self._db.transaction() as db:
            await db.executemany(
                "INSERT INTO agents(agent_id, runner, context_limit) VALUES (?, ?, ?)"
                " ON CONFLICT(agent_id) DO UPDATE SET runner=excluded.runner,"
                " context_limit=excluded.context_limit",
                changed,
            )
