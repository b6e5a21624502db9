"""A small records tree and a server on it, initialized (the `server` fixture).

Each test's tree starts with the record and equation stores one cold check of the same
files left (`tree_stores`, made once per process; tests/warm.py `seed`, never the run
snapshot), as after a user's earlier run: a server's first check of an unchanged file or
claim is served from them (~0.7 -> ~0.4 CPU-s a server that opens the flop class), and
every edit a test makes is checked afresh. tests/project/test_warm_stores.py holds a
seeded run's findings equal to a cold run's; tests/lsp/test_fuzz.py and the bench trees
start their servers cold.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure
from tests.lsp.client import Client
from tests.warm import seed

FILES = {
    "sources/doc.yaml": source_yaml(),
    "flops/source-figure.yaml": _figure(4, 1),
    "flops/user.yaml": USER,
}


@pytest.fixture(scope="session")
def tree_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stores a cold `validate` of `FILES` left (at a `records` folder, as `tree`)."""
    from kb.api import validate

    place = tmp_path_factory.mktemp("lsp-stores")
    write_tree(place / "records", FILES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KB_CACHE_DIR", str(place / "cache"))
        patch.chdir(place)
        assert validate(Path("records"), remember=False).findings == []
    return place / "cache"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tree_stores: Path) -> Path:
    root = tmp_path / "records"
    write_tree(root, FILES)
    monkeypatch.setenv("KB_CACHE_DIR", str(seed(tree_stores, tmp_path / "cache")))
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
