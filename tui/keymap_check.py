"""Check a configured keymap against the binding ids this version of delegate has.

A keymap entry for an id no binding carries would silently do nothing (a typo,
or an id from another version): it is an ``invalid_config`` error naming the id,
raised before the App exists.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from textual.binding import Binding
from textual.dom import DOMNode

import tui
from core.config import CONFIG_FILENAME
from core.errors import InvalidConfig


def binding_ids() -> set[str]:
    """Every ``Binding.id`` declared by an app, screen or widget of ``tui``."""
    for module in pkgutil.walk_packages(tui.__path__, "tui."):
        if module.name.startswith(("tui.app", "tui.screens", "tui.modals", "tui.widgets")):
            importlib.import_module(module.name)
    ids: set[str] = set()
    pending: list[type[DOMNode]] = [DOMNode]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not cls.__module__.startswith("tui."):
            continue
        for binding in getattr(cls, "BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


def check_keymap(keymap: Mapping[str, str]) -> None:
    """Raise ``invalid_config`` naming every keymap id that no binding has."""
    if not keymap:
        return
    known = binding_ids()
    unknown = sorted(set(keymap) - known)
    if unknown:
        raise InvalidConfig(
            f"{CONFIG_FILENAME}: unknown keymap id {', '.join(map(repr, unknown))}"
            f" (known: {', '.join(sorted(known))})"
        )
