"""A small records tree and a server on it, initialized (the `server` fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure
from tests.lsp.client import Client


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "records"
    write_tree(
        root,
        {
            "sources/doc.yaml": source_yaml(),
            "flops/source-figure.yaml": _figure(4, 1),
            "flops/user.yaml": USER,
        },
    )
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return root


@pytest.fixture
def server(tree: Path) -> Iterator[Client]:
    lsp = Client(tree.parent)
    lsp.initialize(tree.parent.as_uri())
    yield lsp
    lsp.close()


@pytest.fixture(autouse=True)
def _collector_given_back() -> Iterator[None]:
    """A server run in this process freezes its snapshots (kb.lsp.engine, gc.freeze), as
    its own process should; the test process gets them back after each test, so no
    later test of this worker starts with objects hidden from the collector."""
    import gc

    yield
    gc.unfreeze()
