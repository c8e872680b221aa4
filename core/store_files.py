"""The store file as a whole, for front ends: a consistent backup, a checked restore.

They work on the file, not through an open store, so a restore works when the store
cannot be opened. The work (SQLite's backup API, the restore lock every opening
process honours, the write-ahead log moved aside) is :mod:`core.store.backup`'s,
beside the file guard it shares with the store's connections; front ends call it
here, so none of them imports the store's package.
"""

from __future__ import annotations

from core.store.backup import StoreCopy, backup_store, restore_store

__all__ = ["StoreCopy", "backup_store", "restore_store"]
