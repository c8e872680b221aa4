"""How long ago another process spoke, and whether its lease still runs: the one place
that decides which clock judges liveness.

On one host (the same :func:`core.clock.clock_id`) a stamp is judged by the
monotonic clock: a wall clock stepped forward (an hour, a suspend's worth) or
back never makes a live owner look silent nor a dead one look alive. A stamp
written on another host, or without a monotonic reading (an older delegate, a
platform without one), can only be judged by wall time; a wall time further in
the future than :data:`SKEW_BOUND_US` says nothing about when it was written,
so it is *untrusted*: the judge replaces it with its own "now" (the moment it
first saw it), from which it ages normally — never trusted until the future
arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.clock import MonoStamp

SKEW_BOUND_US = 60_000_000
"""How far another host's wall clock may read ahead of ours before its stamps are not trusted."""


@dataclass(frozen=True, slots=True)
class Stamp:
    """A moment another process recorded: its wall time, and its monotonic reading if any."""

    wall_us: int
    mono_us: int | None = None
    clock: str | None = None

    def comparable(self, now: MonoStamp | None) -> MonoStamp | None:
        """Its monotonic reading when ``now`` is of the same domain, else None."""
        if now is None or self.mono_us is None or self.clock != now.clock:
            return None
        return MonoStamp(self.mono_us, self.clock)


@dataclass(frozen=True, slots=True)
class Age:
    """How long ago a stamp was made, and by which clock that was judged."""

    us: int
    by: Literal["monotonic", "wall"]
    untrusted: bool = False  # a wall time beyond the skew bound in the future


def age(stamp: Stamp, now_wall_us: int, now_mono: MonoStamp | None) -> Age:
    """How long ago ``stamp`` was made, by the monotonic clock when it compares."""
    mono = stamp.comparable(now_mono)
    if mono is not None and now_mono is not None:
        return Age(now_mono.mono_us - mono.mono_us, "monotonic")
    ahead = stamp.wall_us - now_wall_us
    return Age(now_wall_us - stamp.wall_us, "wall", untrusted=ahead > SKEW_BOUND_US)


LeaseState = Literal["running", "expired", "untrusted"]


def lease_state(
    expires: Stamp, ttl_us: int, now_wall_us: int, now_mono: MonoStamp | None
) -> LeaseState:
    """Whether a lease expiring at ``expires`` still runs for a contender at ``now``.

    ``untrusted``: judged by wall time, it ends further ahead than a renewal of
    ``ttl_us`` by a clock within the skew bound could have set.
    """
    mono = expires.comparable(now_mono)
    if mono is not None and now_mono is not None:
        return "running" if now_mono.mono_us < mono.mono_us else "expired"
    if expires.wall_us - now_wall_us > ttl_us + SKEW_BOUND_US:
        return "untrusted"
    return "running" if now_wall_us < expires.wall_us else "expired"
