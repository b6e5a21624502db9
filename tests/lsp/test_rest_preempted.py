"""A newer change stops a check between the chunks of the files an edit affects.

The edited buffer's diagnostics go out first; the other files it affects are checked
REST_CHUNK at a time, and a change that arrives after any chunk drops the rest of
the check (the newer text is checked next) instead of waiting for all of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kb.lsp import server as lsp_server
from kb.lsp.engine import Engine
from kb.lsp.server import Server
from tests.conftest import source_yaml, write_tree
from tests.diff.test_knowledge_diff import USER, _figure

USERS = 6


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    records = tmp_path / "records"
    files = {"sources/doc.yaml": source_yaml(), "flops/source-figure.yaml": _figure(4, 1)}
    files |= {
        f"flops/user{i}.yaml": USER.replace("flops/user", f"flops/user{i}") for i in range(USERS)
    }
    write_tree(records, files)
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return records


def _check(
    root: Path, monkeypatch: pytest.MonkeyPatch, change_after: int | None
) -> tuple[Any, ...]:
    """Edit the figure every user binds; a change arrives after `change_after` settles."""
    sent: list[dict[str, Any]] = []
    server = Server(write=lambda data: sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1])))
    server.initialized = True
    uri = (root / "flops/source-figure.yaml").as_uri()
    text = _figure(8, 1)  # every user's claims now disagree with the figure
    server.did_open(
        {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}
    )
    runs: list[int] = []
    run = Engine.run

    def counted(engine: Engine, plan: Any, names: Any) -> Any:
        runs.append(len(names))
        return run(engine, plan, names)

    monkeypatch.setattr(Engine, "run", counted)
    settles = 0

    def settle() -> None:
        nonlocal settles
        settles += 1
        if settles == change_after:
            server._changed(root)  # the author typed again

    server.check(root, settle)
    published = {
        m["params"]["uri"] for m in sent if m.get("method") == "textDocument/publishDiagnostics"
    }
    return runs, published, uri


def test_every_affected_file_is_checked_in_chunks_and_published(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, published, uri = _check(root, monkeypatch, change_after=None)
    assert runs[0] == 1 and all(n <= lsp_server.REST_CHUNK for n in runs[1:])
    assert sum(runs) == 1 + USERS  # the figure and each of its users
    assert uri in published and len(published) > 1  # the users' refuted claims too


def test_a_change_after_the_first_chunk_drops_the_rest(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, published, uri = _check(root, monkeypatch, change_after=2)
    assert runs == [1, lsp_server.REST_CHUNK]  # the edited file, one chunk, then stopped
    assert published == {uri}  # the edited buffer's diagnostics only
