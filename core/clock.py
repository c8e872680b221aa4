"""Time in one place: UTC microseconds in the store, aware datetimes in models, and the
monotonic clock that judges liveness on one host.

Two clocks, for two questions. The wall clock (:data:`Clock`) says *when*: it is
what the store sorts by and what people read, and it may be stepped (by NTP, by
hand, by a suspend). The monotonic clock (:data:`MonoClock`) says *how long*:
it never jumps, so heartbeats and leases between processes of one host are
judged by it. Its readings compare only within one boot of one kernel (and one
time namespace): :func:`clock_id` names that domain, and a reading from another
domain is never compared.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache

from core.process_identity import read_small_text

Clock = Callable[[], datetime]
MonoClock = Callable[[], int]
"""Microseconds on this host's monotonic clock."""


def system_clock() -> datetime:
    return datetime.now(UTC)


def system_mono() -> int:
    """This host's ``CLOCK_MONOTONIC`` in µs: the same clock for every process of one boot.

    Not ``CLOCK_BOOTTIME``: a suspend stops every process of the host at once, so
    time spent suspended is not silence, and counting it would judge every
    run silent on resume (as a wall clock stepped forward would).
    """
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


@cache
def clock_id() -> str | None:
    """Where monotonic readings compare: this boot of this kernel, in this time namespace.

    None where that cannot be known (no ``/proc``): then liveness is judged by
    wall time alone, as between hosts.
    """
    boot = read_small_text("/proc/sys/kernel/random/boot_id")
    if boot is None:
        return None
    try:
        namespace = os.readlink("/proc/self/ns/time")  # a time namespace offsets the clock
    except OSError:
        namespace = ""
    return f"boot:{boot}/{namespace}"


@dataclass(frozen=True, slots=True)
class MonoStamp:
    """A monotonic reading and the domain it compares in (see :func:`clock_id`)."""

    mono_us: int
    clock: str


@dataclass(frozen=True, slots=True)
class Clocks:
    """The wall clock and the monotonic clock a process judges liveness by (tests step them)."""

    wall: Clock = system_clock
    mono: MonoClock | None = system_mono
    domain: str | None = field(default_factory=clock_id)

    def wall_us(self) -> int:
        return to_us(self.wall())

    def mono_stamp(self) -> MonoStamp | None:
        """A monotonic reading with its domain; None where readings cannot be compared."""
        if self.mono is None or self.domain is None:
            return None
        return MonoStamp(self.mono(), self.domain)


def to_us(moment: datetime) -> int:
    """Aware datetime -> integer microseconds since the epoch (the store's sort key)."""
    return int(moment.timestamp() * 1_000_000)


def from_us(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, UTC)
