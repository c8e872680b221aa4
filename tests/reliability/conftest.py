"""Shared, built-once inputs of the reliability tests (CI size)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trial_import import Reference, build_corpus, clean_import

# 13 real sessions x 8 copies: about 43 MB, enough for the importer to start its
# worker pool (so a kill has a forkserver and workers to leave behind).
CI_COPIES = 8


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("corpus") / "corpus", CI_COPIES)


@pytest.fixture(scope="session")
def corpus_reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return clean_import(corpus, tmp_path_factory.mktemp("reference"))
