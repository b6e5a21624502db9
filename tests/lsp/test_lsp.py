"""`kb lsp` driven by an LSP client over stdio: diagnostics, completion, hover.

The server runs as its own process (`python -m kb lsp`, tests/lsp/client.py) on the small
records tree of tests/lsp/conftest.py; the test speaks JSON-RPC with Content-Length
framing, as an editor does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.diff.test_knowledge_diff import USER, _figure
from tests.lsp.client import Client


@pytest.fixture
def client(server: Client, tree: Path) -> tuple[Client, Path]:
    """The server of tests/lsp/conftest.py, initialized on its records tree."""
    return server, tree


def _open(lsp: Client, path: Path, text: str) -> str:
    return lsp.open(path.as_uri(), text)


def test_diagnostics_appear_and_clear(client: Any) -> None:
    lsp, root = client
    broken = USER.replace('expr: "x = k*I"', 'expr: "x = k*I +"')
    uri = _open(lsp, root / "flops" / "user.yaml", broken)
    diagnostics = lsp.diagnostics_for(uri)
    assert [d["code"] for d in diagnostics] == ["EQ001"]
    text = '  twice: {expr: "x = k*I +"}'
    line = broken.splitlines().index(text)  # kb's line:col, 0-based: the `expr` of the equation
    assert diagnostics[0]["range"]["start"] == {"line": line, "character": text.index("expr")}
    assert diagnostics[0]["range"]["end"] == {"line": line, "character": len(text)}
    assert diagnostics[0]["severity"] == 1
    assert "operand is missing" in diagnostics[0]["message"]
    lsp.change(uri, USER, 2)
    assert lsp.diagnostics_for(uri) == []


def test_a_changed_figure_republishes_the_record_that_binds_it(client: Any) -> None:
    lsp, root = client
    user = _open(lsp, root / "flops" / "user.yaml", USER)
    assert lsp.diagnostics_for(user) == []
    figure = _open(lsp, root / "flops" / "source-figure.yaml", _figure(4, 1))
    lsp.change(figure, _figure(8, 2), 2)
    while True:  # the first publication for user may be the one of the open above
        codes = sorted(d["code"] for d in lsp.diagnostics_for(user))
        if codes:
            break
    assert codes == ["EQ007", "EQ017"]


def test_completion_offers_ids_and_fields(client: Any) -> None:
    lsp, root = client
    text = USER.replace(
        "      I: flops/source-figure#arithmetic_intensity.value\n", "      I: flops/sou\n", 1
    )
    uri = _open(lsp, root / "flops" / "user.yaml", text)
    lines = text.splitlines()
    row = lines.index("      I: flops/sou")
    position = {"line": row, "character": len(lines[row])}
    result = lsp.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position}
    )
    assert "flops/source-figure" in [item["label"] for item in result["items"]]
    with_field = text.replace("      I: flops/sou\n", "      I: flops/source-figure#arith\n")
    lsp.change(uri, with_field, 2)
    position["character"] = len("      I: flops/source-figure#arith")
    result = lsp.request(
        "textDocument/completion", {"textDocument": {"uri": uri}, "position": position}
    )
    labels = [item["label"] for item in result["items"]]
    assert "flops/source-figure#arithmetic_intensity.value" in labels


def test_hover_shows_the_bound_figure(client: Any) -> None:
    lsp, root = client
    uri = _open(lsp, root / "flops" / "user.yaml", USER)
    lines = USER.splitlines()
    row = lines.index("      I: flops/source-figure#arithmetic_intensity.value")
    position = {"line": row, "character": 15}
    result = lsp.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
    contents = json.dumps(result["contents"])
    assert "4 FLOP/B" in contents and "basis: derived" in contents and "sources/doc" in contents


def test_definition_opens_the_bound_field(client: Any) -> None:
    lsp, root = client
    uri = _open(lsp, root / "flops" / "user.yaml", USER)
    lines = USER.splitlines()
    row = lines.index("      I: flops/source-figure#arithmetic_intensity.value")
    position = {"line": row, "character": 15}
    result = lsp.request(
        "textDocument/definition", {"textDocument": {"uri": uri}, "position": position}
    )
    target = root / "flops" / "source-figure.yaml"
    assert result["uri"] == target.as_uri()
    figure_line = (
        _figure(4, 1)
        .splitlines()
        .index("  value: {value: 4, unit: FLOP/B, basis: derived, source: sources/doc}")
    )
    assert result["range"]["start"]["line"] == figure_line
