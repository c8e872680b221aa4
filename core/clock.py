"""Time in one place: UTC microseconds in the store, aware datetimes in models."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def to_us(moment: datetime) -> int:
    """Aware datetime -> integer microseconds since the epoch (the store's sort key)."""
    return int(moment.timestamp() * 1_000_000)


def from_us(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, UTC)
