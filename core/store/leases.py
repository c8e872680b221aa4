"""Leases: one holder of a named role at a time, across processes, with an expiry.

Supervisors on one data folder elect their leader with a lease: the holder
renews it on every tick; when the holder stops (or dies) the lease expires and
another takes it. Read and decided inside one write transaction, so two
contenders never both win.

A lease's end is stored as a wall time (what another host can read) and, when
the holder gives one, a monotonic reading with its clock: a contender of the same
clock judges by that, so a wall clock stepped back cannot strand a lease nor a
step forward end one early (see :mod:`core.elapsed`).
"""

from __future__ import annotations

from core.clock import MonoStamp
from core.elapsed import Stamp, lease_state
from core.store.database import Database, first_row


class LeasesRepository:
    """The ``leases`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def acquire(
        self, name: str, holder: str, now_us: int, ttl_us: int, mono: MonoStamp | None = None
    ) -> bool:
        """Take or renew ``name`` for ``holder`` until ``ttl_us`` from now.

        ``now_us``: wall time; ``mono``: the holder's monotonic reading now, if it
        has one. True when ``holder`` holds it afterwards: it was free, expired,
        or already ``holder``'s. False while another holder's lease still runs.
        Another holder's lease whose wall time ends further ahead than its clock
        could honestly have set is shortened to ``ttl_us`` from now (its clock is
        wrong: it ages from the moment it was seen).
        """
        async with self._db.transaction() as db:
            row = first_row(
                await db.execute_fetchall(
                    "SELECT holder, expires_at, expires_mono, expires_clock FROM leases"
                    " WHERE name = ?",
                    (name,),
                )
            )
            if row is not None and row["holder"] != holder:
                expires = Stamp(row["expires_at"], row["expires_mono"], row["expires_clock"])
                state = lease_state(expires, ttl_us, now_us, mono)
                if state == "untrusted":
                    await db.execute(
                        "UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?",
                        (now_us + ttl_us, name, row["holder"]),
                    )
                if state != "expired":
                    return False
            await db.execute(
                "INSERT INTO leases (name, holder, expires_at, expires_mono, expires_clock)"
                " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO UPDATE SET holder = ?2,"
                " expires_at = ?3, expires_mono = ?4, expires_clock = ?5",
                (
                    name,
                    holder,
                    now_us + ttl_us,
                    None if mono is None else mono.mono_us + ttl_us,
                    None if mono is None else mono.clock,
                ),
            )
        return True

    async def release(self, name: str, holder: str) -> None:
        """Give ``name`` up if ``holder`` holds it (another's lease is left alone)."""
        async with self._db.transaction() as db:
            await db.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

    async def holder(self, name: str, now_us: int, mono: MonoStamp | None = None) -> str | None:
        """Who holds ``name`` now (None when free or expired), judged as :meth:`acquire` does."""
        row = await self._db.fetch_one(
            "SELECT holder, expires_at, expires_mono, expires_clock FROM leases WHERE name = ?",
            (name,),
        )
        if row is None:
            return None
        expires = Stamp(row["expires_at"], row["expires_mono"], row["expires_clock"])
        # Without its term, an untrusted lease is still held: only a contender shortens it.
        ttl_us = max(0, row["expires_at"] - now_us)
        return (
            str(row["holder"]) if lease_state(expires, ttl_us, now_us, mono) != "expired" else None
        )
