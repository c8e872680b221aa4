"""Leases: one holder of a named role at a time, across processes, with an expiry.

Supervisors on one data folder elect their leader with a lease: the holder
renews it on every tick; when the holder stops (or dies) the lease expires and
another takes it. One conditional upsert, so two contenders never both win.
"""

from __future__ import annotations

from core.store.database import Database, first_row


class LeasesRepository:
    """The ``leases`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def acquire(self, name: str, holder: str, now_us: int, ttl_us: int) -> bool:
        """Take or renew ``name`` for ``holder`` until ``now_us + ttl_us``.

        True when ``holder`` holds it afterwards: it was free, expired, or already
        ``holder``'s. False while another holder's lease is still running.
        """
        async with self._db.transaction() as db:
            await db.execute(
                "INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3)"
                " ON CONFLICT (name) DO UPDATE SET holder = ?2, expires_at = ?3"
                " WHERE leases.holder = ?2 OR leases.expires_at <= ?4",
                (name, holder, now_us + ttl_us, now_us),
            )
            row = first_row(
                await db.execute_fetchall("SELECT holder FROM leases WHERE name = ?", (name,))
            )
        return row is not None and row[0] == holder

    async def release(self, name: str, holder: str) -> None:
        """Give ``name`` up if ``holder`` holds it (another's lease is left alone)."""
        async with self._db.transaction() as db:
            await db.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    async def holder(self, name: str, now_us: int) -> str | None:
        """Who holds ``name`` now (None when free or expired)."""
        row = await self._db.fetch_one(
            "SELECT holder FROM leases WHERE name = ? AND expires_at > ?", (name, now_us)
        )
        return str(row[0]) if row is not None else None
