"""Capsules in the store's documents registry: the row, the digest, who used it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from support import BASE_US, finished

from core.capsules.registry import (
    capsule_document,
    current_capsule_document,
    forget_capsules,
    record_use,
    register_capsule,
)
from core.capsules.storage import save_capsule
from core.config import DB_FILENAME
from core.documents.handoff_registry import digest
from core.models import DocumentKind, DocumentStatus
from core.store import Store
from core.tokens import count_tokens

WHEN = datetime(2026, 1, 21, 14, 30, 45, tzinfo=UTC)
TEXT = "---\nbranch: main\n---\n# Mission Snapshot\n- ship the capsule registry\n"


async def test_a_capsule_row_keeps_id_digest_source_and_its_users(
    tmp_path: Path, data_dir: Path
) -> None:
    path = save_capsule(tmp_path, TEXT, branch="main", created=WHEN)
    store = await Store.open(data_dir / DB_FILENAME)
    other = await Store.open(data_dir / DB_FILENAME)  # a second connection sees the same rows
    try:
        await store.bulk.insert([finished("main-session", BASE_US), finished("sub", BASE_US)])
        row = await register_capsule(
            store,
            path,
            TEXT,
            source_session="main-session",
            producer="agent",
            status=DocumentStatus.DRAFT,
            created=WHEN,
        )
        assert row.kind is DocumentKind.CAPSULE
        assert row.path == str(path)
        assert row.digest == digest(TEXT)
        assert row.source_session == "main-session"
        assert row.status is DocumentStatus.DRAFT
        assert row.producer == "agent"
        assert row.token_estimate == count_tokens(TEXT)
        assert row.created_at == WHEN

        await record_use(store, row.document_id, "sub")
        await record_use(store, row.document_id, "sub")  # once per session
        seen = await capsule_document(other, path)
        assert seen is not None
        assert seen.document_id == row.document_id
        assert seen.consumers == ("sub",)
        assert await current_capsule_document(other, path, TEXT) == seen
        assert await current_capsule_document(other, path, TEXT + "edited\n") is None
    finally:
        await other.close()
        await store.close()


async def test_a_final_row_by_a_person_and_pruned_rows_go(tmp_path: Path, data_dir: Path) -> None:
    path = save_capsule(tmp_path, TEXT, branch="main", created=WHEN)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        row = await register_capsule(store, path, TEXT, source_session=None, producer="person")
        assert row.status is DocumentStatus.FINAL
        assert await capsule_document(store, tmp_path / "elsewhere.md") is None
        assert await forget_capsules(store, [path]) == [row.document_id]
        assert await capsule_document(store, path) is None
    finally:
        await store.close()
