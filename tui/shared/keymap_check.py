"""Check a configured keymap against the binding ids this version of delegate has.

A keymap entry for an id no binding carries would silently do nothing (a typo,
or an id from another version): it is an ``invalid_config`` error naming the id,
raised before the App exists. So is a panel action moved onto a key that typing
produces: text typed into the panel goes to its search, and a word typed there
must never archive, stop or quit anything.
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


# Keys no typing produces, besides chords with ctrl, alt, super or meta.
_NAMED_KEYS = frozenset(
    ["enter", "escape", "tab", "backspace", "delete", "insert", "home", "end"]
    + ["pageup", "pagedown", "up", "down", "left", "right"]
    + [f"f{n}" for n in range(1, 25)]
)
_CHORD_MODIFIERS = ("ctrl", "alt", "super", "meta")
# The screens whose printable keys type into a search field.
_TYPE_TO_SEARCH_PREFIXES = ("picker.",)


def typed_by_text(key: str) -> bool:
    """Whether typing text can produce ``key`` ("k", "question_mark", "shift+a")."""
    *modifiers, base = key.strip().split("+")
    if any(modifier in _CHORD_MODIFIERS for modifier in modifiers):
        return False
    return base not in _NAMED_KEYS


def check_keymap(keymap: Mapping[str, str]) -> None:
    """Raise ``invalid_config`` naming every keymap id that no binding has, and every
    panel action moved onto a key that typing produces."""
    if not keymap:
        return
    known = binding_ids()
    unknown = sorted(set(keymap) - known)
    if unknown:
        raise InvalidConfig(
            f"{CONFIG_FILENAME}: unknown keymap id {', '.join(map(repr, unknown))}"
            f" (known: {', '.join(sorted(known))})"
        )
    typed = sorted(
        f"{binding_id} = {keys!r}"
        for binding_id, keys in keymap.items()
        if binding_id.startswith(_TYPE_TO_SEARCH_PREFIXES)
        and any(typed_by_text(key) for key in keys.split(","))
    )
    if typed:
        raise InvalidConfig(
            f"{CONFIG_FILENAME}: {'; '.join(typed)} would be typed into the panel's search;"
            ' use a ctrl or alt chord or a function key (e.g. "ctrl+k", "alt+d", "f4")'
        )
