"""The keys a screen answers to right now (the user's keymap applied), by binding id."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from textual.binding import Binding, BindingType
from textual.screen import Screen


def declared_bindings(bindings: Iterable[BindingType]) -> Iterator[Binding]:
    """The ``Binding`` objects of a ``BINDINGS`` list (ours are all ``Binding``)."""
    for binding in bindings:
        if isinstance(binding, Binding):
            yield binding


def live_keys(screen: Screen[Any]) -> dict[str, list[str]]:
    """Binding id -> the keys bound to it now (remapped keys included)."""
    keys_by_id: dict[str, list[str]] = {}
    for key, active in screen.active_bindings.items():
        if active.binding.id:
            keys_by_id.setdefault(active.binding.id, []).append(key)
    return keys_by_id


def keys_shown(screen: Screen[Any], binding: Binding, live: dict[str, list[str]]) -> str:
    """How the keys of ``binding`` read in help and the palette: ``"/, f"``, ``"^d"``."""
    keys = live.get(binding.id or "", binding.key.split(","))
    return ", ".join(screen.app.get_key_display(Binding(key, "")) for key in keys)
