"""Routing between roles: a returned status -> the next role, or the end of the chain.

The table is ``[returns] routes`` (seed 002's over the built-in one): a key is a
status (``PASS``) or a status for one role only (``qa_expert:BLOCKED``), which wins
over the plain one. A target is a role or ``end``. The table is checked once, when
it is read, so a typo in a config file is an error naming its key, not a chain that
silently stops.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from core.config import ReturnsSettings
from core.errors import InvalidConfig, UnknownRole
from core.returns.model import END, INVALID_RETURN, ROLE_STATUSES, AgentRole
from core.returns.schemas import role_of

Target = AgentRole | Literal["end"]

_ALL_STATUSES: Final = frozenset(
    status for statuses in ROLE_STATUSES.values() for status in statuses
)


def _where(key: str) -> str:
    return f"[returns] routes key {key[:80]!r}"


def _target(key: str, value: str) -> Target:
    if isinstance(value, str) and value.strip().lower() == END:
        return END
    try:
        return role_of(value)
    except UnknownRole:
        roles = ", ".join(role.value for role in AgentRole)
        raise InvalidConfig(
            f"{_where(key)}: its target {str(value)[:80]!r} is neither a role ({roles}) nor 'end'"
        ) from None


def _key(key: str) -> str:
    """``key`` in its canonical form (``qa:BLOCKED`` -> ``qa_expert:BLOCKED``), checked."""
    role_part, sep, status = key.rpartition(":")
    status = status.strip()
    if not sep:
        if status not in _ALL_STATUSES:
            raise InvalidConfig(
                f"{_where(key)}: {status[:80]!r} is no role's status (statuses are upper"
                " case, e.g. READY_FOR_QA, PASS, APPROVED, BAZINGA)"
            )
        return status
    try:
        role = role_of(role_part)
    except UnknownRole as error:
        raise InvalidConfig(f"{_where(key)}: {error.message}") from None
    if status not in ROLE_STATUSES[role]:
        raise InvalidConfig(
            f"{_where(key)}: {status[:80]!r} is not a {role.value} status (one of"
            f" {', '.join(ROLE_STATUSES[role])})"
        )
    return f"{role.value}:{status}"


@dataclass(frozen=True, slots=True)
class Routes:
    """A checked routing table: ``STATUS`` or ``role:STATUS`` -> a role or ``end``."""

    table: Mapping[str, Target] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: ReturnsSettings) -> Routes:
        """The settings' table, each key and target checked (:class:`InvalidConfig` names
        the key at fault)."""
        return cls.from_table(settings.routes)

    @classmethod
    def from_table(cls, routes: Mapping[str, str]) -> Routes:
        return cls({_key(key): _target(key, value) for key, value in routes.items()})

    def next_role(self, role: AgentRole, status: str) -> Target | None:
        """Where a ``role`` returning ``status`` goes next; None when nothing follows
        (an invalid return, a status the role may not return, no route)."""
        if status == INVALID_RETURN or status not in ROLE_STATUSES[role]:
            return None
        found = self.table.get(f"{role.value}:{status}")
        return found if found is not None else self.table.get(status)
