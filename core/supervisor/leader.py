"""Leader election between supervisors on one data folder, through a store lease.

The lease is judged by the monotonic clock between supervisors of one host
(a wall clock stepped back or forward neither strands nor ends it), by wall time
with a skew bound across hosts (see core.elapsed).
"""

from __future__ import annotations

import logging
import uuid

from core import process_identity
from core.clock import Clock, Clocks, MonoClock, system_clock, system_mono
from core.errors import DelegateError
from core.store import Store

log = logging.getLogger(__name__)

LEASE_NAME = "supervisor"


def new_holder() -> str:
    """A name for this supervisor: unique even for two in one process."""
    me = process_identity.current()
    return f"{me.host}:{me.pid}:{uuid.uuid4().hex[:8]}"


class Leadership:
    """Holds (or waits for) the ``supervisor`` lease; :meth:`renew` on every tick."""

    def __init__(
        self,
        store: Store,
        *,
        ttl_s: float,
        clock: Clock = system_clock,
        mono_clock: MonoClock | None = system_mono,
        holder: str | None = None,
    ) -> None:
        """``clock``: wall time (what another host reads); ``mono_clock``: the
        monotonic clock leases of this host are judged by (None: wall time only)."""
        self._store = store
        self._ttl_us = int(ttl_s * 1_000_000)
        self._clocks = Clocks(clock, mono_clock)
        self.holder = holder or new_holder()
        self.is_leader = False
        self._last_problem: str | None = None

    async def renew(self) -> bool:
        """Take or keep the lease; False while another supervisor's lease runs.

        A store that cannot be written (busy, read-only) means not leading: a
        leader that cannot renew would otherwise act beside its successor.
        """
        try:
            self.is_leader = await self._store.leases.acquire(
                LEASE_NAME,
                self.holder,
                self._clocks.wall_us(),
                self._ttl_us,
                self._clocks.mono_stamp(),
            )
        except DelegateError as exc:
            if str(exc) != self._last_problem:  # once per problem, not once a tick
                log.warning("cannot renew the supervisor lease: %s", exc)
            self._last_problem = str(exc)
            self.is_leader = False
        else:
            self._last_problem = None
        return self.is_leader

    async def release(self) -> None:
        if not self.is_leader:
            return
        self.is_leader = False
        try:
            await self._store.leases.release(LEASE_NAME, self.holder)
        except DelegateError as exc:  # it expires by itself
            log.warning("cannot release the supervisor lease: %s", exc)
